// The only door to Ink: each function shows one screen and resolves to what the person chose.
// All refuse to run without a terminal; commands offer flags instead.
import React, { type ReactElement } from 'react';
import { render } from 'ink';
import { CliFailure, EXIT } from '../errors.ts';
import { assertInteractive } from './tty.ts';
import { LoginForm, type LoginFormProps } from './LoginForm.tsx';
import { Picker, type PickerItem } from './Picker.tsx';
import { LogTail, type LogTailProps } from './LogTail.tsx';
import { Dashboard, type DashboardAction, type DashboardProps } from './Dashboard.tsx';

class CancelledError extends CliFailure {
  constructor(what: string) {
    super(`${what} was cancelled.`, EXIT.refused, 'CANCELLED');
  }
}

/** Mounts a screen until it calls `finish` or `cancel`, unmounts it, then settles. */
export function showScreen<T>(build: (finish: (value: T) => void, cancel: () => void) => ReactElement, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let outcome: { value: T } | null = null;
    const app = render(build(
      (value) => {
        outcome = { value };
        app.unmount();
      },
      () => app.unmount(),
    ), { exitOnCtrlC: true });
    app.waitUntilExit().then(
      () => (outcome ? resolve(outcome.value) : reject(new CancelledError(what))),
      reject,
    );
  });
}

export type LoginScreenOptions = Omit<LoginFormProps, 'onDone' | 'onCancel'>;

/** Resolves to the e-mail that signed in; the callbacks store the tokens. */
export function renderLogin(options: LoginScreenOptions): Promise<string> {
  assertInteractive('The sign-in form', 'pass --email and --password-stdin (and --code with 2FA).');
  return showScreen<string>((finish, cancel) => <LoginForm {...options} onDone={finish} onCancel={cancel} />, 'Sign-in');
}

export function renderPicker<V>(title: string, items: PickerItem<V>[], initialValue?: V): Promise<V> {
  assertInteractive(title, 'pass the choice as an argument.');
  return showScreen<V>((finish, cancel) => <Picker title={title} items={items} initialValue={initialValue} onPick={finish} onCancel={cancel} />, title);
}

export type LogTailScreenOptions = Omit<LogTailProps, 'onExit'>;

/** Runs the live log until the person presses q. */
export function renderLogTail(options: LogTailScreenOptions): Promise<void> {
  assertInteractive('The live log view', 'run `svc logs tail` without a terminal to get one line per change, or `svc logs list`.');
  return showScreen<void>((finish) => <LogTail {...options} onExit={() => finish()} />, 'The log view');
}

/** Resolves to the screen the person jumped to, or null when they quit. */
export function renderDashboard(options: Omit<DashboardProps, 'onAction' | 'onExit'>): Promise<DashboardAction | null> {
  assertInteractive('The dashboard', 'run `svc --help` for the commands.');
  return showScreen<DashboardAction | null>((finish) => <Dashboard {...options} onAction={finish} onExit={() => finish(null)} />, 'The dashboard');
}
