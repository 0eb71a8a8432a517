// A loopback PostgreSQL wire-protocol server in front of PGlite, so Sequelize, pg and the worker
// threads talk to the embedded database as to a real server.
//
// PGlite has ONE backend session, shared by every connection. Two rules keep clients from
// corrupting each other on it:
//  1. A client's messages reach PGlite in whole groups: everything up to and including Sync ('S'),
//     Flush ('H') or a simple Query ('Q'). Interleaving one client's Parse/Bind/Execute with another's would mix
//     their unnamed statements, and after an error the backend discards messages up to the next
//     Sync — another client's messages, whose owner then waits forever. (pglite-socket's own
//     multiplexer queues single messages and hangs this way under a few concurrent clients.)
//  2. While the session is inside a transaction, only groups of the client that opened it run;
//     the others wait. A client that disconnects mid-transaction has it rolled back.
import { createServer, type Server, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

const PROTOCOL_V3 = 196608;
const SSL_REQUEST_CODE = 80877103;
const GSS_REQUEST_CODE = 80877104;
const CANCEL_REQUEST_CODE = 80877102;
/** Message types that end a group: Sync, simple Query, Flush. */
const GROUP_END = new Set(['S', 'Q', 'H']);

/** Work for the backend: a client's whole group of messages, or the clean-up after a client left. */
type Group = { kind: 'messages'; session: Session; bytes: Buffer } | { kind: 'departed'; session: Session };

class Session {
  private buffer: Buffer = Buffer.alloc(0);
  private pending: Buffer[] = [];
  private started = false;
  closed = false;

  constructor(
    readonly socket: Socket,
    private readonly scheduler: Scheduler,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.receive(chunk));
    socket.on('close', () => this.close());
    socket.on('error', () => this.close());
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      if (!this.started) {
        if (this.buffer.length < 8) return;
        const length = this.buffer.readInt32BE(0);
        if (this.buffer.length < length) return;
        const code = this.buffer.readInt32BE(4);
        const message = this.buffer.subarray(0, length);
        this.buffer = this.buffer.subarray(length);
        if (code === SSL_REQUEST_CODE || code === GSS_REQUEST_CODE) {
          this.socket.write('N');
          continue;
        }
        if (code === CANCEL_REQUEST_CODE) {
          this.socket.end();
          return;
        }
        if (code !== PROTOCOL_V3) {
          this.socket.destroy();
          return;
        }
        this.started = true;
        this.scheduler.submit({ kind: 'messages', session: this, bytes: Buffer.from(message) });
        continue;
      }
      if (this.buffer.length < 5) return;
      const length = 1 + this.buffer.readInt32BE(1);
      if (this.buffer.length < length) return;
      const type = String.fromCharCode(this.buffer[0]);
      const message = Buffer.from(this.buffer.subarray(0, length));
      this.buffer = this.buffer.subarray(length);
      if (type === 'X') {
        // Terminate belongs to this client, not to the shared backend session.
        this.socket.end();
        this.close();
        return;
      }
      this.pending.push(message);
      if (GROUP_END.has(type)) {
        this.scheduler.submit({ kind: 'messages', session: this, bytes: Buffer.concat(this.pending) });
        this.pending = [];
      }
    }
  }

  write(data: Uint8Array): void {
    if (!this.closed && this.socket.writable) this.socket.write(data);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.scheduler.forget(this);
  }
}

class Scheduler {
  private queue: Group[] = [];
  private running = false;
  /** The session whose transaction is open on the backend, if any. */
  private owner: Session | null = null;

  constructor(private readonly db: PGlite) {}

  submit(group: Group): void {
    this.queue.push(group);
    void this.run();
  }

  forget(session: Session): void {
    this.queue = this.queue.filter((group) => group.session !== session);
    if (this.owner === session) {
      this.owner = null;
      this.queue.unshift({ kind: 'departed', session });
    }
    void this.run();
  }

  private next(): Group | undefined {
    if (this.owner) {
      const index = this.queue.findIndex((group) => group.session === this.owner);
      return index === -1 ? undefined : this.queue.splice(index, 1)[0];
    }
    return this.queue.shift();
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let group = this.next(); group; group = this.next()) {
        const { session } = group;
        if (group.kind === 'departed' || session.closed) {
          // A departed client: undo whatever transaction it left open.
          if (this.db.isInTransaction()) await this.db.exec('ROLLBACK').catch(() => {});
          continue;
        }
        const { bytes } = group;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(new Uint8Array(bytes), { onRawData: (data) => session.write(data) }),
          );
        } catch {
          session.socket.destroy();
          session.close();
        }
        this.owner = this.db.isInTransaction() && !session.closed ? session : null;
      }
    } finally {
      this.running = false;
    }
  }
}

export interface PgliteServer {
  port: number;
  close(): Promise<void>;
}

export async function servePglite(db: PGlite, host = '127.0.0.1'): Promise<PgliteServer> {
  const scheduler = new Scheduler(db);
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    new Session(socket, scheduler);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
