// Sign-in form: e-mail, masked password, then the authenticator code when the daemon asks for it.
// One keyboard handler serves every field and reads the form's state from a ref, so keys typed while
// React is still switching fields (fast typing, a burst of Backspaces, a paste with Enter inside) land in
// the field they were meant for.
import React, { useRef, useState } from 'react';
import { Box, Text, useInput } from 'ink';
import { TextInput, feedForm } from './TextInput.tsx';
import { errorText } from '../../daemon/errors.ts';

export type CredentialsOutcome = 'signed-in' | 'needs-code';

export interface LoginFormProps {
  baseUrl: string;
  initialEmail?: string;
  submitCredentials: (email: string, password: string) => Promise<CredentialsOutcome>;
  submitCode: (code: string) => Promise<void>;
  onDone: (email: string) => void;
  onCancel: () => void;
}

type Step = 'email' | 'password' | 'code' | 'working';

const EMAIL_REQUIRED = 'Type the e-mail address you registered with, then Enter.';
const looksLikeEmail = (value: string) => /^[^\s@]+@[^\s@]+$/.test(value.trim());
type Field = 'email' | 'password' | 'code';

export function LoginForm({ baseUrl, initialEmail, submitCredentials, submitCode, onDone, onCancel }: LoginFormProps) {
  const [step, setStepState] = useState<Step>(initialEmail ? 'password' : 'email');
  const [fields, setFields] = useState<Record<Field, string>>({ email: initialEmail ?? '', password: '', code: '' });
  const [twoFactor, setTwoFactor] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // The truth for the keyboard handler: updated at once, rendered through the state above.
  const live = useRef({ step, fields: { ...fields } });

  const setStep = (next: Step) => {
    live.current.step = next;
    setStepState(next);
  };
  const setField = (field: Field, value: string) => {
    live.current.fields = { ...live.current.fields, [field]: value };
    setFields(live.current.fields);
    // A complaint about the address goes as soon as what is typed answers it.
    if (field === 'email' && looksLikeEmail(value)) setError((shown) => (shown === EMAIL_REQUIRED ? null : shown));
  };

  const failed = (back: Step, clear: Field) => (reason: unknown) => {
    setField(clear, '');
    setError(errorText(reason));
    setStep(back);
  };

  const submit = (field: Field) => {
    const { email, password, code } = live.current.fields;
    if (field === 'email') {
      if (!looksLikeEmail(email)) return setError(EMAIL_REQUIRED);
      setError(null);
      return setStep('password');
    }
    if (field === 'password') {
      setStep('working');
      setError(null);
      submitCredentials(email, password).then(
        (outcome) => {
          if (outcome === 'signed-in') return onDone(email);
          setTwoFactor(true);
          setStep('code');
        },
        failed('password', 'password'),
      );
      return;
    }
    if (!/^\d{6}$/.test(code)) return setError('The code is the 6 digits your authenticator app shows.');
    setStep('working');
    setError(null);
    submitCode(code).then(() => onDone(email), failed('code', 'code'));
  };

  useInput((input, key) => {
    if (key.escape) return onCancel();
    feedForm<Field>(input, key, {
      field: () => (live.current.step === 'working' ? null : live.current.step),
      value: (field) => live.current.fields[field],
      set: setField,
      submit,
    });
  });

  const noop = () => {};
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>Sign in to {baseUrl}</Text>
      <Box>
        <Text>E-mail </Text>
        {step === 'email' ? (
          <TextInput
            value={fields.email}
            onChange={noop}
            onSubmit={noop}
            capture={false}
            placeholder="type your e-mail address"
          />
        ) : (
          <Text>{fields.email}</Text>
        )}
      </Box>
      {step !== 'email' && !twoFactor ? (
        <Box>
          <Text>Password </Text>
          <TextInput
            value={fields.password}
            onChange={noop}
            onSubmit={noop}
            capture={false}
            mask="*"
            focus={step === 'password'}
          />
        </Box>
      ) : null}
      {twoFactor ? (
        <Box>
          <Text>Code </Text>
          <TextInput
            value={fields.code}
            onChange={noop}
            onSubmit={noop}
            capture={false}
            focus={step === 'code'}
            placeholder="6 digits from your authenticator app"
          />
        </Box>
      ) : null}
      {step === 'working' ? <Text color="cyan">Checking…</Text> : null}
      {error ? <Text color="red">{error}</Text> : null}
      <Text dimColor>Enter to continue · Esc to cancel</Text>
    </Box>
  );
}
