// Preloaded (node --import) into the daemon children by the bench when BENCH_QUERY_COUNT_DIR is set:
// counts the statements every thread of this process sends to PostgreSQL and writes the running
// count to <dir>/<pid>-<threadId>.count four times a second (worker threads run the preload too).
//
// It reads the bytes written to sockets connected to DATABASE_URL's port, in PostgreSQL's frontend
// protocol: each simple Query ('Q') or extended-protocol Execute ('E') message is one statement, as
// each call of pg's client.query is. Counting on the wire rather than by patching pg's Client works
// for the daemon's build too, which bundles its own copy of pg. Plain .mjs: it runs before anything
// else is loaded. No TLS on the bench's connections (they go to 127.0.0.1), so the bytes are readable.
import { rename, writeFile } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';

const dir = process.env.BENCH_QUERY_COUNT_DIR;
const QUERY = 0x51; // 'Q'
const EXECUTE = 0x45; // 'E'

/** Where one connection's outgoing byte stream stands: in the untyped start-up, in a header, or skipping a body. */
class FrontendStream {
  startup = true;
  header = Buffer.alloc(0);
  skip = 0;

  /** Answers how many statements this chunk completes the header of. */
  feed(chunk) {
    let statements = 0;
    let at = 0;
    while (at < chunk.length) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        this.skip -= n;
        at += n;
        continue;
      }
      // Start-up packets (StartupMessage, SSLRequest, CancelRequest) have a length and no type byte.
      const headerLength = this.startup ? 4 : 5;
      const take = Math.min(headerLength - this.header.length, chunk.length - at);
      this.header = Buffer.concat([this.header, chunk.subarray(at, at + take)]);
      at += take;
      if (this.header.length < headerLength) break;
      if (this.startup) {
        const length = this.header.readInt32BE(0);
        this.skip = length - 4;
        // An 8-byte SSLRequest/GSSENCRequest is followed by the StartupMessage, itself untyped.
        if (length !== 8) this.startup = false;
      } else {
        const type = this.header[0];
        if (type === QUERY || type === EXECUTE) statements += 1;
        this.skip = this.header.readInt32BE(1) - 4;
      }
      this.header = Buffer.alloc(0);
    }
    return statements;
  }
}

if (dir) {
  const databasePort = Number(new URL(process.env.DATABASE_URL ?? 'postgres://localhost').port || 5432);
  const streams = new WeakMap();
  let count = 0;
  const write = Socket.prototype.write;
  Socket.prototype.write = function countedWrite(chunk, encoding, callback) {
    if (this.remotePort === databasePort && chunk !== null && chunk !== undefined) {
      let stream = streams.get(this);
      if (!stream) streams.set(this, (stream = new FrontendStream()));
      const bytes =
        typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk;
      count += stream.feed(bytes);
    }
    return write.call(this, chunk, encoding, callback);
  };
  const file = join(dir, `${process.pid}-${threadId}.count`);
  let written = -1;
  let writing = false;
  // Written off the thread (libuv's pool): a synchronous write every 250 ms was ~3 % of the send
  // thread's busy time in a drain profile, a cost only the measured daemon paid.
  setInterval(() => {
    if (count === written || writing) return;
    const value = count;
    writing = true;
    // Renamed into place, so a reader never sees a file half written.
    writeFile(`${file}.next`, String(value), (error) => {
      if (error) {
        writing = false;
        return;
      }
      rename(`${file}.next`, file, (failed) => {
        writing = false;
        if (!failed) written = value;
      });
    });
  }, 250).unref();
}
