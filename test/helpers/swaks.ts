// Debian's swaks delivering a message to a local SMTP listener: a real SMTP client, not ours.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

export interface SwaksRun {
  code: number | null;
  /** The whole transcript (swaks prints the dialogue on stdout). */
  output: string;
}

export function swaks(port: number, args: string[]): Promise<SwaksRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      'swaks',
      ['--server', `127.0.0.1:${port}`, '--helo', 'mx.example.net', '--timeout', '20', ...args],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** A port nobody listens on right now (the listener under test binds it from its config). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
