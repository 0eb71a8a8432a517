// A real SMTP server in the test process that parses what it receives (smtp-server + mailparser).
// `reject` lets a test answer RCPT or DATA with an error code.
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export interface ReceivedMessage {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
  parsed: ParsedMail;
  receivedAt: number;
}

export interface SmtpSinkBehaviour {
  /** Answer for RCPT TO of this address: e.g. { code: 550, message: 'no such user' }. */
  onRcpt?: (address: string) => { code: number; message: string } | null;
  /** Answer for DATA: e.g. { code: 451, message: 'try later' }. */
  onData?: (count: number) => { code: number; message: string } | null;
}

export interface SmtpSink {
  port: number;
  messages: ReceivedMessage[];
  behaviour: SmtpSinkBehaviour;
  /** Client connections open now, and the most open at once since the sink started. */
  connections: { open: number; peak: number };
  waitFor(match: (m: ReceivedMessage) => boolean, timeoutMs?: number): Promise<ReceivedMessage>;
  waitForCount(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function smtpError(answer: { code: number; message: string }): Error {
  const error = new Error(answer.message) as Error & { responseCode: number };
  error.responseCode = answer.code;
  return error;
}

export async function startSmtpSink(options: { parse?: boolean } = {}): Promise<SmtpSink> {
  const parse = options.parse ?? true;
  const messages: ReceivedMessage[] = [];
  const behaviour: SmtpSinkBehaviour = {};
  let dataCount = 0;
  const connections = { open: 0, peak: 0 };
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    // Credentials are optional; when given they must be user "u" with password "hunter2-secret".
    onAuth(auth, _session, callback) {
      if (auth.username === 'u' && auth.password === 'hunter2-secret') return callback(null, { user: auth.username });
      return callback(new Error('535 5.7.8 bad credentials'));
    },
    disabledCommands: ['STARTTLS'],
    logger: false,
    size: 30 * 1024 * 1024,
    onConnect(_session, callback) {
      connections.open += 1;
      connections.peak = Math.max(connections.peak, connections.open);
      callback();
    },
    onClose() {
      connections.open -= 1;
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      const answer = behaviour.onRcpt?.(address.address) ?? null;
      callback(answer ? smtpError(answer) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        dataCount += 1;
        const answer = behaviour.onData?.(dataCount) ?? null;
        if (answer) return callback(smtpError(answer));
        const raw = Buffer.concat(chunks).toString('utf8');
        const record = (parsed: ParsedMail) =>
          messages.push({
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            rcptTo: session.envelope.rcptTo.map((r) => r.address),
            raw,
            parsed,
            receivedAt: Date.now(),
          });
        if (!parse) {
          record({} as ParsedMail);
          return callback();
        }
        simpleParser(raw).then(
          (parsed) => {
            record(parsed);
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  const poll = async (done: () => boolean, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`SMTP sink: timed out waiting for ${what} (have ${messages.length})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    port,
    messages,
    behaviour,
    connections,
    async waitFor(match, timeoutMs = 10_000) {
      await poll(() => messages.some(match), timeoutMs, 'a matching message');
      return messages.find(match)!;
    },
    async waitForCount(count, timeoutMs = 30_000) {
      await poll(() => messages.length >= count, timeoutMs, `${count} messages`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
