// The only door to Ink: each function shows one screen and resolves to what the person chose.
// All refuse to run without a terminal; commands offer flags instead. Ink and the screens are
// imported only when a screen is shown: loading Ink costs seconds that pipelines should not pay.
import type { ReactElement } from 'react';
import { CliFailure, EXIT } from '../errors.ts';
import { assertInteractive } from './tty.ts';
import type { LoginFormProps } from './LoginForm.tsx';
import type { PickerItem } from './Picker.tsx';
import type { PasswordPromptProps } from './PasswordPrompt.tsx';
import type { LogTailProps } from './LogTail.tsx';
import type { InboundTailProps } from './InboundTail.tsx';
import type { DashboardAction, DashboardProps } from './Dashboard.tsx';
import type { ProgressState } from './Progress.tsx';
import type { QueueScreenProps } from './Queue.tsx';
import type { DeliverabilityProps } from './Deliverability.tsx';
import type { PoolsProps } from './Pools.tsx';

class CancelledError extends CliFailure {
  constructor(what: string) {
    super(`${what} was cancelled.`, EXIT.refused, 'CANCELLED');
  }
}

/** Mounts a screen until it calls `finish` or `cancel`, unmounts it, then settles. */
export async function showScreen<T>(
  build: (finish: (value: T) => void, cancel: () => void) => ReactElement,
  what: string,
): Promise<T> {
  const { render } = await import('ink');
  return new Promise<T>((resolve, reject) => {
    let outcome: { value: T } | null = null;
    const app = render(
      build(
        (value) => {
          outcome = { value };
          app.unmount();
        },
        () => app.unmount(),
      ),
      { exitOnCtrlC: true },
    );
    app.waitUntilExit().then(() => (outcome ? resolve(outcome.value) : reject(new CancelledError(what))), reject);
  });
}

export type LoginScreenOptions = Omit<LoginFormProps, 'onDone' | 'onCancel'>;

/** Resolves to the e-mail that signed in; the callbacks store the tokens. */
export async function renderLogin(options: LoginScreenOptions): Promise<string> {
  assertInteractive('The sign-in form', 'pass --email and --password-stdin (and --code with 2FA).');
  const [{ createElement }, { LoginForm }] = await Promise.all([import('react'), import('./LoginForm.tsx')]);
  return showScreen<string>(
    (finish, cancel) => createElement(LoginForm, { ...options, onDone: finish, onCancel: cancel }),
    'Sign-in',
  );
}

/** Resolves to the typed password (masked on screen). */
export async function renderPasswordPrompt(options: Omit<PasswordPromptProps, 'onDone' | 'onCancel'>): Promise<string> {
  assertInteractive('The password prompt', 'pipe the password in with --password-stdin.');
  const [{ createElement }, { PasswordPrompt }] = await Promise.all([import('react'), import('./PasswordPrompt.tsx')]);
  return showScreen<string>(
    (finish, cancel) => createElement(PasswordPrompt, { ...options, onDone: finish, onCancel: cancel }),
    'The password prompt',
  );
}

export async function renderPicker<V>(title: string, items: PickerItem<V>[], initialValue?: V): Promise<V> {
  assertInteractive(title, 'pass the choice as an argument.');
  const [{ createElement }, { Picker }] = await Promise.all([import('react'), import('./Picker.tsx')]);
  return showScreen<V>(
    (finish, cancel) => createElement(Picker<V>, { title, items, initialValue, onPick: finish, onCancel: cancel }),
    title,
  );
}

export type LogTailScreenOptions = Omit<LogTailProps, 'onExit'>;

/** Runs the live log until the person presses q. */
export async function renderLogTail(options: LogTailScreenOptions): Promise<void> {
  assertInteractive(
    'The live log view',
    'run `svc logs tail` without a terminal to get one line per change, or `svc logs list`.',
  );
  const [{ createElement }, { LogTail }] = await Promise.all([import('react'), import('./LogTail.tsx')]);
  return showScreen<void>((finish) => createElement(LogTail, { ...options, onExit: () => finish() }), 'The log view');
}

/** Runs the live inbound mail screen until the person presses q. */
export async function renderInboundTail(options: Omit<InboundTailProps, 'onExit'>): Promise<void> {
  assertInteractive('The live inbound view', 'run `svc inbound tail` without a terminal to get one line per message.');
  const [{ createElement }, { InboundTail }] = await Promise.all([import('react'), import('./InboundTail.tsx')]);
  return showScreen<void>(
    (finish) => createElement(InboundTail, { ...options, onExit: () => finish() }),
    'The inbound view',
  );
}

/** Resolves to the screen the person jumped to, or null when they quit. */
export async function renderDashboard(
  options: Omit<DashboardProps, 'onAction' | 'onExit'>,
): Promise<DashboardAction | null> {
  assertInteractive('The dashboard', 'run `svc --help` for the commands.');
  const [{ createElement }, { Dashboard }] = await Promise.all([import('react'), import('./Dashboard.tsx')]);
  return showScreen<DashboardAction | null>(
    (finish) => createElement(Dashboard, { ...options, onAction: finish, onExit: () => finish(null) }),
    'The dashboard',
  );
}

/** Runs the live outbound queue screen until the person presses q. */
export async function renderQueue(options: Omit<QueueScreenProps, 'onExit'>): Promise<void> {
  assertInteractive('The live queue screen', 'run `svc queue` without --watch for one snapshot (or with --json).');
  const [{ createElement }, { QueueScreen }] = await Promise.all([import('react'), import('./Queue.tsx')]);
  return showScreen<void>(
    (finish) => createElement(QueueScreen, { ...options, onExit: () => finish() }),
    'The queue screen',
  );
}

/** Draws a live progress bar until `updates` ends (or q is pressed); resolves to the last state. */
export async function renderProgress(
  title: string,
  updates: AsyncIterable<ProgressState>,
): Promise<ProgressState | null> {
  assertInteractive(title, 'pass --json, or pipe the output, to get plain progress lines.');
  const [{ createElement }, { Progress }] = await Promise.all([import('react'), import('./Progress.tsx')]);
  return showScreen<ProgressState | null>(
    (finish) => createElement(Progress, { title, updates, onEnd: finish }),
    title,
  );
}

/** Shows the deliverability chart until the person presses q or Esc. */
export async function renderDeliverability(options: Omit<DeliverabilityProps, 'onExit'>): Promise<void> {
  assertInteractive('The deliverability chart', 'pass --json, or pipe the output, to get the report as text.');
  const [{ createElement }, { Deliverability }] = await Promise.all([import('react'), import('./Deliverability.tsx')]);
  return showScreen<void>(
    (finish) => createElement(Deliverability, { ...options, onExit: () => finish() }),
    'The deliverability chart',
  );
}

/** Shows the IP pools screen until q is pressed. */
export async function renderPools(options: Omit<PoolsProps, 'onExit'>): Promise<void> {
  assertInteractive('The IP pools screen', 'pass --json, or pipe the output, to get one snapshot.');
  const [{ createElement }, { Pools }] = await Promise.all([import('react'), import('./Pools.tsx')]);
  return showScreen<void>(
    (finish) => createElement(Pools, { ...options, onExit: () => finish() }),
    'The IP pools screen',
  );
}
