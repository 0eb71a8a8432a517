// RFC 4648 base32 in lower case, without padding: what goes into a local part that mail systems may
// lower-case (SRS hashes, reply addresses). Letters and the digits 2–7 only, so no character is lost or
// confused when a local part changes case.
export const BASE32_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** The first `chars` characters of `bytes` in base32 (5 bits each; a last partial group padded with zeros). */
export function base32(bytes: Uint8Array, chars: number): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      out += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length >= chars) return out;
  }
  if (bits > 0 && out.length < chars) out += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** `text` (any case) read back into `byteCount` bytes; null when a character is not base32 or it is too short. */
export function base32Bytes(text: string, byteCount: number): Buffer | null {
  const out = Buffer.alloc(byteCount);
  let bits = 0;
  let value = 0;
  let at = 0;
  for (const char of text.toLowerCase()) {
    const digit = BASE32_ALPHABET.indexOf(char);
    if (digit < 0) return null;
    value = ((value << 5) | digit) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      if (at === byteCount) return null;
      out[at++] = (value >>> (bits - 8)) & 0xff;
      bits -= 8;
    }
  }
  return at === byteCount ? out : null;
}
