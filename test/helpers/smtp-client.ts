// A bare SMTP client for protocol-level assertions (what is advertised, what one command answers),
// where swaks or nodemailer would hide the exchange: one command, one (multi-line) reply.
// `swaks` runs Debian's swaks as a child process (asynchronously: the server may be in this process).
import { execFile } from 'node:child_process';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type TLSSocket } from 'node:tls';

export interface SmtpReply {
  code: number;
  lines: string[];
  /** The reply's text lines joined (without codes). */
  text: string;
}

export interface RawSmtpClient {
  /** Sends one line (CRLF added) and resolves with the reply; `command` null only reads. */
  command(line: string | null): Promise<SmtpReply>;
  /** STARTTLS, then the socket continues over TLS (the certificate is not checked). */
  startTls(): Promise<SmtpReply>;
  /** The server's certificate once the connection is over TLS. */
  peerCertificate(): import('node:tls').PeerCertificate | null;
  close(): void;
}

export async function openSmtp(
  port: number,
  options: { implicitTls?: boolean } = {},
): Promise<RawSmtpClient & { greeting: SmtpReply }> {
  let socket: Socket | TLSSocket = options.implicitTls
    ? connectTls({ port, host: '127.0.0.1', rejectUnauthorized: false })
    : connectTcp({ port, host: '127.0.0.1' });
  let buffer = '';
  let waiting: ((reply: SmtpReply) => void) | null = null;
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    // A reply ends with a line "NNN text" (a space, not a dash, after the code).
    const match = /(^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(buffer);
    if (!match || !waiting) return;
    const end = match.index + match[0].length;
    const lines = buffer.slice(0, end).split('\r\n').filter(Boolean);
    buffer = buffer.slice(end);
    const resolve = waiting;
    waiting = null;
    resolve({ code: Number(match[2]), lines, text: lines.map((line) => line.slice(4)).join('\n') });
  };
  const read = () =>
    new Promise<SmtpReply>((resolve) => {
      waiting = resolve;
      onData(Buffer.alloc(0));
    });
  socket.on('data', onData);
  const greeting = await read();
  const client: RawSmtpClient = {
    command(line) {
      const reply = read();
      if (line !== null) socket.write(`${line}\r\n`);
      return reply;
    },
    async startTls() {
      const reply = await client.command('STARTTLS');
      if (reply.code !== 220) return reply;
      socket.off('data', onData);
      socket = connectTls({ socket, rejectUnauthorized: false });
      socket.on('data', onData);
      await new Promise((resolve) => (socket as TLSSocket).once('secureConnect', resolve));
      return reply;
    },
    peerCertificate: () => ('getPeerCertificate' in socket ? socket.getPeerCertificate() : null),
    close: () => socket.destroy(),
  };
  return { ...client, greeting };
}

export const plainAuth = (user: string, password: string) => Buffer.from(`\0${user}\0${password}`).toString('base64');

export interface SwaksResult {
  exitCode: number;
  /** The transcript swaks prints (both directions). */
  output: string;
}

/** Runs swaks with these arguments; never throws on a non-zero exit (the SMTP refusal is the point). */
export function swaks(args: string[]): Promise<SwaksResult> {
  return new Promise((resolve) => {
    execFile('swaks', args, { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ exitCode: code, output: `${stdout}${stderr}` });
    });
  });
}
