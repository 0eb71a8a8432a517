// Sign-in form: e-mail, masked password, then the authenticator code when the daemon asks for it.
import React, { useState } from 'react';
import { Box, Text, useInput } from 'ink';
import { TextInput } from './TextInput.tsx';

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

export function LoginForm({ baseUrl, initialEmail, submitCredentials, submitCode, onDone, onCancel }: LoginFormProps) {
  const [step, setStep] = useState<Step>(initialEmail ? 'password' : 'email');
  const [email, setEmail] = useState(initialEmail ?? '');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [twoFactor, setTwoFactor] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useInput((_input, key) => {
    if (key.escape) onCancel();
  });

  const failed = (back: Step) => (reason: unknown) => {
    setError(reason instanceof Error ? reason.message : String(reason));
    setStep(back);
  };

  const sendCredentials = (typedPassword: string) => {
    setStep('working');
    setError(null);
    submitCredentials(email, typedPassword).then((outcome) => {
      if (outcome === 'signed-in') return onDone(email);
      setTwoFactor(true);
      setStep('code');
    }, (reason: unknown) => {
      setPassword('');
      failed('password')(reason);
    });
  };

  const sendCode = (typedCode: string) => {
    if (!/^\d{6}$/.test(typedCode)) return setError('The code is the 6 digits your authenticator app shows.');
    setStep('working');
    setError(null);
    submitCode(typedCode).then(() => onDone(email), (reason: unknown) => {
      setCode('');
      failed('code')(reason);
    });
  };

  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>Sign in to {baseUrl}</Text>
      <Box>
        <Text>E-mail    </Text>
        {step === 'email' ? (
          <TextInput value={email} onChange={setEmail} onSubmit={(typed) => typed.includes('@') ? (setError(null), setStep('password')) : setError('Enter an e-mail address.')} placeholder="you@example.com" />
        ) : (
          <Text>{email}</Text>
        )}
      </Box>
      {step !== 'email' && !twoFactor ? (
        <Box>
          <Text>Password  </Text>
          <TextInput value={password} onChange={setPassword} onSubmit={sendCredentials} mask="*" focus={step === 'password'} />
        </Box>
      ) : null}
      {twoFactor ? (
        <Box>
          <Text>Code      </Text>
          <TextInput value={code} onChange={setCode} onSubmit={sendCode} focus={step === 'code'} placeholder="6 digits from your authenticator app" />
        </Box>
      ) : null}
      {step === 'working' ? <Text color="cyan">Checking…</Text> : null}
      {error ? <Text color="red">{error}</Text> : null}
      <Text dimColor>Enter to continue · Esc to cancel</Text>
    </Box>
  );
}
