// The human output of another svc command, for a screen that shows it inside the dashboard. Running the
// command itself (same binary, same profile) keeps one implementation of each listing.
import { spawn } from 'node:child_process';

// The svc binary running now (bin/svc.js): this module's own URL names a file of the CLI's build.
const BIN = process.argv[1];

export function captureCommand(args: string[], columns: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, COLUMNS: String(columns) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(stdout.trimEnd())
        : reject(new Error(stderr.trim().split('\n').pop() || `svc ${args.join(' ')} exited ${code}`)),
    );
  });
}
