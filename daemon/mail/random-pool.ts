// Random bytes for the few each message needs (the IV of each link token, the MIME boundary), drawn
// from a block filled by one call. `crypto.randomBytes(12)` costs ~15 µs a call (a job object and a
// call into OpenSSL whatever the size): three or four calls per message were 5 % of the send thread
// on the unsigned drain (docs/drain.md). The bytes are the same CSPRNG output; each is handed out
// once, since a used block is replaced, never refilled in place (a caller may keep its slice).
import { randomFillSync } from 'node:crypto';

/** `size` fresh random bytes. */
export type RandomBytes = (size: number) => Buffer;

const BLOCK_BYTES = 4096;

/** A RandomBytes drawing from blocks of `blockBytes`; a request larger than a block gets its own. */
export function createRandomPool(blockBytes = BLOCK_BYTES): RandomBytes {
  let block = Buffer.alloc(0);
  let used = 0;
  return (size) => {
    if (size > blockBytes) return randomFillSync(Buffer.allocUnsafeSlow(size));
    if (used + size > block.length) {
      block = randomFillSync(Buffer.allocUnsafeSlow(blockBytes));
      used = 0;
    }
    used += size;
    return block.subarray(used - size, used);
  };
}
