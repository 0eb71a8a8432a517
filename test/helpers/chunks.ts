// Input split into chunks at generated points, for the tests that check a stream's copy gives the
// stream's output however the input arrives (DATA escaping, the DKIM body hash, CRLF line ends).
import fc from 'fast-check';

/** `data` cut at `cuts` (clamped to its length; repeated cuts give empty chunks). */
export function splitAt(data: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((cut) => Math.min(cut, data.length)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(data.subarray(from, point));
    from = point;
  }
  chunks.push(data.subarray(from));
  return chunks;
}

/** Bytes of `byte` (up to `maxLength`) with up to five cuts in them. */
export function chunkedBytes(byte: fc.Arbitrary<number>, maxLength: number): fc.Arbitrary<Buffer[]> {
  return fc
    .tuple(fc.array(byte, { maxLength }), fc.array(fc.integer({ min: 0, max: maxLength }), { maxLength: 5 }))
    .map(([bytes, cuts]) => splitAt(Buffer.from(bytes), cuts));
}
