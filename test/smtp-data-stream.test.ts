// smtp-server's DATA reader with its byte loop made a native search (daemon/smtp/data-stream.ts)
// against smtp-server's own: the same message bytes, the same end of DATA and the same bytes after it,
// for DATA phases cut into chunks anywhere (a CRLF, a dot or the terminator across two chunks, a
// dot-stuffed line at a chunk's start, bare LFs, 8-bit bytes), and through a real server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { createConnection } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { installFastDataStream, readData as read } from '../daemon/smtp/data-stream.ts';
import { splitAt } from './helpers/chunks.ts';

/** The same chunks read by smtp-server's method and by the replacement. */
async function both(chunks: Buffer[]) {
  const handle = await installFastDataStream();
  const fast = await read(chunks);
  handle.restore();
  const original = await read(chunks);
  await installFastDataStream();
  return { fast, original };
}

const piece = fc.constantFrom(
  'a',
  'word ',
  '\r\n',
  '\n',
  '.',
  '..',
  '\r\n.',
  '\r\n..',
  '\r\n.\r\n',
  '\xe9\xff',
  '\r',
  'QUIT\r\n',
);
const phase = fc
  .tuple(fc.array(piece, { maxLength: 120 }), fc.array(fc.nat({ max: 400 }), { maxLength: 6 }))
  .map(([pieces, cuts]) => splitAt(Buffer.from(pieces.join(''), 'latin1'), cuts).filter((c) => c.length > 0));

test('the same data and end of DATA as smtp-server’s own reader, in any chunks', async () => {
  await fc.assert(
    fc.asyncProperty(phase, async (chunks) => {
      const { fast, original } = await both(chunks);
      assert.equal(fast, original);
    }),
    { numRuns: 1_500 },
  );
});

test('cases by hand: the terminator and dot-stuffing at chunk edges', async () => {
  const message = `Subject: x\r\n\r\n..starts with a dot\r\n..\r\n${'line\r\n'.repeat(3_000)}...\r\n.\r\nQUIT\r\n`;
  const bytes = Buffer.from(message, 'latin1');
  const terminator = message.lastIndexOf('\r\n.\r\n');
  for (const cut of [1, 2, 14, 15, 16, terminator, terminator + 1, terminator + 2, terminator + 3, terminator + 4]) {
    const { fast, original } = await both([bytes.subarray(0, cut), bytes.subarray(cut)]);
    assert.equal(fast, original, `cut at ${cut}`);
    assert.is(fast.after, 'QUIT\r\n', `cut at ${cut}`);
    assert.ok(fast.data.startsWith('Subject: x\r\n\r\n.starts with a dot\r\n.\r\nline\r\n'), `cut at ${cut}`);
    assert.ok(fast.data.endsWith('line\r\n..\r\n'), `cut at ${cut}`);
  }
  // A lone dot line at the start of DATA ends it at once; stuffed, it is content.
  assert.equal((await both([Buffer.from('.\r\nNOOP\r\n')])).fast, { data: '', after: 'NOOP\r\n' });
  assert.equal((await both([Buffer.from('..\r\n.\r\n')])).fast, { data: '.\r\n', after: '' });
});

test('a server reads a dot-stuffed message sent in pieces', async () => {
  await installFastDataStream();
  const received: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push(Buffer.concat(chunks).toString('latin1'));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  const body = `Subject: dots\r\n\r\n${Array.from({ length: 2_000 }, (_, n) => (n % 7 === 0 ? `..line ${n}` : `line ${n}`)).join('\r\n')}\r\n`;
  const socket = createConnection(port, '127.0.0.1');
  let replies = '';
  const replied = (count: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if ((replies.match(/^\d{3} /gm) ?? []).length >= count) {
          socket.off('data', onData);
          resolve();
        }
      };
      const onData = (chunk: Buffer) => {
        replies += chunk.toString();
        check();
      };
      socket.on('data', onData);
      check();
    });
  await replied(1);
  socket.write('EHLO test\r\nMAIL FROM:<a@example.com>\r\nRCPT TO:<b@example.org>\r\nDATA\r\n');
  await replied(5);
  const bytes = Buffer.from(`${body}.\r\n`, 'latin1');
  // In pieces of 1,000 bytes: lines, their dots and the terminator fall across them.
  for (let at = 0; at < bytes.length; at += 1_000) socket.write(bytes.subarray(at, at + 1_000));
  await replied(6);
  socket.end('QUIT\r\n');
  await new Promise<void>((resolve) => server.close(resolve));
  assert.match(replies, /250 OK: message queued/);
  assert.is(received[0], body.replace(/^\.\./gm, '.'));
});

test.run();
