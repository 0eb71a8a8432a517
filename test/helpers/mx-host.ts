// A recipient's MX host for the MTA tests: smtp-server on port 25 of a loopback alias (127.0.0.2–254;
// the tests run as root, and on Linux the whole 127/8 is the loopback interface), answering as scripted
// (refusals per recipient, slow or failing DATA, a reset mid-DATA) and recording what it received,
// from which source address, under which EHLO name, over TLS or not, on which connection.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

export interface ReceivedMessage {
  from: string;
  to: string[];
  raw: Buffer;
  remoteAddress: string;
  clientHostname: string;
  helo: string;
  secure: boolean;
  /** The id of the connection that carried it. */
  connection: string;
  /** When its DATA ended (epoch ms): the spacing shaping and throttles leave between messages. */
  receivedAt: number;
}

export interface MxHostScript {
  /** A reply to refuse this RCPT with (`550 5.1.1 no such user`), or null to take it. */
  rcpt?: (address: string) => string | null;
  /** A reply to refuse the message with after DATA, `hang` to never answer, `reset` to drop the socket. */
  data?: (message: ReceivedMessage) => string | null | 'hang' | 'reset' | Promise<string | null | 'hang' | 'reset'>;
  /** PEM files for STARTTLS; without them STARTTLS is not offered. */
  tls?: { cert: string; key: string };
}

export interface MxHost {
  address: string;
  messages: ReceivedMessage[];
  /** Connections accepted so far, and the most open at once. */
  connectionsOpened: number;
  maxConcurrentConnections: number;
  close(): Promise<void>;
}

function replyError(reply: string): Error {
  const match = /^(\d{3})\s+(.*)$/.exec(reply);
  return Object.assign(new Error(match ? match[2] : reply), { responseCode: match ? Number(match[1]) : 550 });
}

/**
 * Test files that name their MX hosts' addresses take them below 180 (each file its own: 127.0.0.140–146
 * are the shaping tests', for instance); addresses picked at random come from 180–254, so that a file
 * running beside another never takes the address the other is about to bind (CI runs two at once).
 */
const RANDOM_LOOPBACK_FIRST = 180;
/** Addresses this process has handed out: a "down" host's address is never given to a host started later. */
const handedOut = new Set<string>();

/** A loopback address of 127.0.0.180–254, not handed out before in this process, with nothing listening on port 25 right now (for "host down" cases too). */
export async function freeLoopbackAddress(taken: Set<string> = new Set()): Promise<string> {
  for (;;) {
    const address = `127.0.0.${RANDOM_LOOPBACK_FIRST + Math.floor(Math.random() * (255 - RANDOM_LOOPBACK_FIRST))}`;
    if (taken.has(address) || handedOut.has(address)) continue;
    const listening = await new Promise<boolean>((resolve) => {
      const socket = net.connect(25, address);
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (!listening) {
      handedOut.add(address);
      return address;
    }
  }
}

export async function startMxHost(script: MxHostScript = {}, address?: string): Promise<MxHost> {
  let open = 0;
  const host: MxHost = {
    address: '',
    messages: [],
    connectionsOpened: 0,
    maxConcurrentConnections: 0,
    close: async () => {},
  };
  const server: SMTPServer = new SMTPServer({
    authOptional: true,
    disabledCommands: script.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(script.tls ? { key: readFileSync(script.tls.key), cert: readFileSync(script.tls.cert) } : {}),
    logger: false,
    // A test that left a session hanging must not hold its teardown for smtp-server's 30 s.
    closeTimeout: 200,
    onConnect(_session, callback) {
      open++;
      host.connectionsOpened++;
      host.maxConcurrentConnections = Math.max(host.maxConcurrentConnections, open);
      callback();
    },
    onClose() {
      open--;
    },
    onRcptTo(rcpt, _session, callback) {
      const refusal = script.rcpt?.(rcpt.address) ?? null;
      callback(refusal ? replyError(refusal) : undefined);
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const message: ReceivedMessage = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks),
          remoteAddress: session.remoteAddress,
          clientHostname: session.clientHostname,
          helo: session.hostNameAppearsAs,
          secure: session.secure,
          connection: session.id,
          receivedAt: Date.now(),
        };
        void Promise.resolve(script.data?.(message) ?? null).then((answer) => {
          if (answer === 'hang') return;
          if (answer === 'reset') {
            // smtp-server hands out no socket; find this session's connection among the server's.
            const connections = (server as unknown as { connections: Set<{ id: string; _socket: net.Socket }> })
              .connections;
            for (const connection of connections) if (connection.id === session.id) connection._socket.destroy();
            return;
          }
          if (answer) return callback(replyError(answer));
          host.messages.push(message);
          callback();
        });
      });
    },
  });
  server.on('error', () => {});
  for (let tries = 0; ; tries++) {
    const candidate = address ?? (await freeLoopbackAddress());
    try {
      await new Promise<void>((resolve, reject) => {
        const onError = (error: Error) => reject(error);
        server.server.once('error', onError);
        server.listen(25, candidate, () => {
          server.server.off('error', onError);
          resolve();
        });
      });
      host.address = candidate;
      break;
    } catch (error) {
      if (address || tries > 20) throw error;
    }
  }
  host.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return host;
}
