// A masked password prompt (twice when choosing a new one), for `svc register` in a terminal.
import React, { useRef, useState } from 'react';
import { Box, Text, useInput } from 'ink';
import { TextInput, feedForm } from './TextInput.tsx';

export interface PasswordPromptProps {
  title: string;
  /** Ask twice and compare (a new password). */
  confirm?: boolean;
  minLength?: number;
  /** Field label and masking (default "Password", masked): the 2FA code prompt shows its digits. */
  label?: string;
  masked?: boolean;
  onDone: (password: string) => void;
  onCancel: () => void;
}

export function PasswordPrompt({
  title,
  confirm = false,
  minLength = 0,
  label = 'Password',
  masked = true,
  onDone,
  onCancel,
}: PasswordPromptProps) {
  const [values, setValues] = useState({ first: '', second: '' });
  const [step, setStepState] = useState<'first' | 'second'>('first');
  const [error, setError] = useState<string | null>(null);
  // One keyboard handler for both fields, reading a ref (see LoginForm: no key lost while fields switch).
  const live = useRef({ step: 'first' as 'first' | 'second', values: { first: '', second: '' } });
  const setStep = (next: 'first' | 'second') => {
    live.current.step = next;
    setStepState(next);
  };
  const tooShort = `At least ${minLength} characters.`;
  const setValue = (field: 'first' | 'second', value: string) => {
    live.current.values = { ...live.current.values, [field]: value };
    setValues(live.current.values);
    // The length complaint is about what is typed now: it goes once the password is long enough
    // (and comes back on Enter if it is shortened again).
    if (field === 'first' && value.length >= minLength) setError((shown) => (shown === tooShort ? null : shown));
  };
  const submit = (field: 'first' | 'second') => {
    const { first, second } = live.current.values;
    if (field === 'first') {
      if (first.length < minLength) return setError(tooShort);
      setError(null);
      if (!confirm) return onDone(first);
      return setStep('second');
    }
    if (second === first) return onDone(second);
    setError('The two passwords differ: type it again.');
    setValue('first', '');
    setValue('second', '');
    setStep('first');
  };
  useInput((input, key) => {
    if (key.escape) return onCancel();
    feedForm<'first' | 'second'>(input, key, {
      field: () => live.current.step,
      value: (field) => live.current.values[field],
      set: setValue,
      submit,
    });
  });
  const noop = () => {};
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>{title}</Text>
      <Box>
        <Text>{label.padEnd(10)}</Text>
        <TextInput
          value={values.first}
          onChange={noop}
          onSubmit={noop}
          capture={false}
          mask={masked ? '*' : undefined}
          focus={step === 'first'}
        />
      </Box>
      {confirm && step === 'second' ? (
        <Box>
          <Text>Again </Text>
          <TextInput value={values.second} onChange={noop} onSubmit={noop} capture={false} mask="*" focus />
        </Box>
      ) : null}
      {error ? <Text color="red">{error}</Text> : null}
      <Text dimColor>Enter to continue · Esc to cancel</Text>
    </Box>
  );
}
