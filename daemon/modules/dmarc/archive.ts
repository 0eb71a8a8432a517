// Bounded decompression of DMARC report attachments (gzip, zip) that strangers send to the inbound
// port. Nothing a header claims is trusted: a first pass inflates as a stream, counting the bytes it
// really produces and keeping none, and stops at the cap whatever ISIZE or a zip header says (a
// 1 GiB bomb costs ~0.1 s of CPU and one 64 KiB chunk of memory); only what passed is inflated again
// to be kept (maxOutputLength still set). The zip's directory is read here, by hand, so that every
// entry, its method, its sizes and its CRC are checked before its text is used. Runs in the inbound
// reader's thread (inbound-mail/reader.ts), never on the daemon's event loop.
import { errorText } from '../../errors.ts';
import { crc32, createGunzip, createInflateRaw, gunzipSync, inflateRawSync } from 'node:zlib';

/** Why an attachment was refused: the message is the reason the log line gives. */
export class UnreadableReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableReportError';
  }
}

/** A report is one XML file; a few entries (a readme, a signature) are tolerated, more is not a report. */
export const MAX_ZIP_ENTRIES = 5;

const ZIP_LOCAL_HEADER = 0x04034b50;
const ZIP_CENTRAL_HEADER = 0x02014b50;
const ZIP_END_OF_DIRECTORY = 0x06054b50;
const ZIP_END_OF_DIRECTORY_BYTES = 22;
const ZIP_MAX_COMMENT_BYTES = 0xffff;
const ZIP_METHOD_STORED = 0;
const ZIP_METHOD_DEFLATE = 8;
const ZIP_FLAG_ENCRYPTED = 0x1;

export const isGzip = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b;
/** A local file header, or the end-of-directory record an empty zip consists of. */
export const isZip = (bytes: Uint8Array) =>
  bytes[0] === 0x50 &&
  bytes[1] === 0x4b &&
  ((bytes[2] === 0x03 && bytes[3] === 0x04) || (bytes[2] === 0x05 && bytes[3] === 0x06));
const ARCHIVE_NAME = /\.(zip|gz|gzip|tgz|tar|bz2|xz|7z|rar|zst)$/i;

function refuseNested(bytes: Uint8Array, what: string): void {
  if (isGzip(bytes) || isZip(bytes))
    throw new UnreadableReportError(`${what} is itself an archive: nested archives are refused`);
}

/** zlib's failures in words: the cap, a bad checksum, a cut-off stream. */
function inflateFailure(error: unknown, what: string, maxBytes: number, claimed: number): UnreadableReportError {
  const code = (error as { code?: string }).code;
  const message = errorText(error);
  if (code === 'ERR_BUFFER_TOO_LARGE')
    return new UnreadableReportError(
      `${what} inflates past the ${maxBytes}-byte limit (its header claims ${claimed} bytes)`,
    );
  if (code === 'INFLATE_RATIO')
    return new UnreadableReportError(
      `${what} inflates more than ${MAX_INFLATE_RATIO} times its compressed size (its header claims ${claimed} bytes): a decompression bomb`,
    );
  if (/incorrect data check/i.test(message)) return new UnreadableReportError(`${what} fails its CRC check: corrupt`);
  if (/incorrect length check/i.test(message))
    return new UnreadableReportError(`${what} inflates to another size than its trailer states: corrupt`);
  if (/unexpected end of file/i.test(message)) return new UnreadableReportError(`${what} is truncated`);
  return new UnreadableReportError(`${what} cannot be inflated: ${message}`);
}

const INFLATE_CHUNK_BYTES = 64 * 1024;
/**
 * XML reports deflate 10–30 times; bombs 1,000 times and more. Past the floor, output running ahead of
 * this multiple of the input consumed so far is refused at once: a bomb then costs ~1 MiB of output,
 * not the whole cap (memory the allocator keeps, CPU).
 */
export const MAX_INFLATE_RATIO = 200;
const INFLATE_RATIO_FLOOR_BYTES = 1024 * 1024;

/**
 * Inflates as a stream and keeps nothing: the real size and CRC-32 of the output, or
 * ERR_BUFFER_TOO_LARGE as soon as the output passes `maxBytes`. gzip checks its own CRC and ISIZE.
 */
function measureInflated(
  format: 'gzip' | 'raw',
  data: Uint8Array,
  maxBytes: number,
): Promise<{ size: number; crc: number }> {
  return new Promise((resolve, reject) => {
    const stream =
      format === 'gzip'
        ? createGunzip({ chunkSize: INFLATE_CHUNK_BYTES })
        : createInflateRaw({ chunkSize: INFLATE_CHUNK_BYTES });
    let size = 0;
    let crc = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes)
        return stream.destroy(Object.assign(new Error('past the limit'), { code: 'ERR_BUFFER_TOO_LARGE' }));
      if (size > INFLATE_RATIO_FLOOR_BYTES && size > MAX_INFLATE_RATIO * stream.bytesWritten)
        return stream.destroy(Object.assign(new Error('ratio'), { code: 'INFLATE_RATIO' }));
      crc = crc32(chunk, crc);
    });
    stream.once('error', reject);
    stream.once('end', () => resolve({ size, crc }));
    stream.end(data);
  });
}

/** The inflated bytes of a gzip attachment (every member), refused past `maxBytes`, on a bad CRC or when cut off. */
export async function gunzipBounded(content: Uint8Array, maxBytes: number): Promise<Buffer> {
  const claimed = content.length >= 4 ? Buffer.from(content.subarray(content.length - 4)).readUInt32LE(0) : 0;
  let inflated: Buffer;
  try {
    await measureInflated('gzip', content, maxBytes);
    inflated = gunzipSync(content, { maxOutputLength: maxBytes });
  } catch (error) {
    throw inflateFailure(error, 'the gzip report', maxBytes, claimed);
  }
  refuseNested(inflated, 'the gzip report');
  return inflated;
}

export interface ZipEntry {
  name: string;
  content: Buffer;
}

interface DirectoryEntry {
  name: string;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  claimedSize: number;
  localHeaderOffset: number;
}

function endOfDirectory(zip: Buffer): { entries: number; directorySize: number; directoryOffset: number } {
  const lowest = Math.max(0, zip.length - ZIP_END_OF_DIRECTORY_BYTES - ZIP_MAX_COMMENT_BYTES);
  for (let at = zip.length - ZIP_END_OF_DIRECTORY_BYTES; at >= lowest; at--) {
    if (zip.readUInt32LE(at) !== ZIP_END_OF_DIRECTORY) continue;
    if (at + ZIP_END_OF_DIRECTORY_BYTES + zip.readUInt16LE(at + 20) > zip.length) continue;
    const entries = zip.readUInt16LE(at + 10);
    const directorySize = zip.readUInt32LE(at + 12);
    const directoryOffset = zip.readUInt32LE(at + 16);
    if (zip.readUInt16LE(at + 4) !== 0 || zip.readUInt16LE(at + 8) !== entries)
      throw new UnreadableReportError('the zip spans several disks');
    if (entries === 0xffff || directorySize === 0xffffffff || directoryOffset === 0xffffffff)
      throw new UnreadableReportError('the zip is a ZIP64 archive, which no report needs');
    return { entries, directorySize, directoryOffset };
  }
  throw new UnreadableReportError('the zip is truncated: it has no end-of-central-directory record');
}

function readDirectory(zip: Buffer): DirectoryEntry[] {
  const end = endOfDirectory(zip);
  if (end.entries > MAX_ZIP_ENTRIES)
    throw new UnreadableReportError(
      `the zip has ${end.entries} entries; a report has one (at most ${MAX_ZIP_ENTRIES} accepted)`,
    );
  if (end.directoryOffset + end.directorySize > zip.length)
    throw new UnreadableReportError('the zip is truncated: its central directory lies past the end');
  const entries: DirectoryEntry[] = [];
  let at = end.directoryOffset;
  for (let index = 0; index < end.entries; index++) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== ZIP_CENTRAL_HEADER)
      throw new UnreadableReportError('the zip is corrupt: its central directory is not where its end record says');
    const nameLength = zip.readUInt16LE(at + 28);
    const next = at + 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    if (next > zip.length) throw new UnreadableReportError('the zip is truncated inside its central directory');
    entries.push({
      name: zip.toString('utf8', at + 46, at + 46 + nameLength),
      flags: zip.readUInt16LE(at + 8),
      method: zip.readUInt16LE(at + 10),
      crc: zip.readUInt32LE(at + 16),
      compressedSize: zip.readUInt32LE(at + 20),
      claimedSize: zip.readUInt32LE(at + 24),
      localHeaderOffset: zip.readUInt32LE(at + 42),
    });
    at = next;
  }
  if (at !== end.directoryOffset + end.directorySize)
    throw new UnreadableReportError('the zip is corrupt: its central directory is not the size its end record states');
  return entries;
}

/** The entry's compressed bytes, located through its local header (whose own sizes are not used). */
function entryData(zip: Buffer, entry: DirectoryEntry): Buffer {
  const at = entry.localHeaderOffset;
  if (at + 30 > zip.length || zip.readUInt32LE(at) !== ZIP_LOCAL_HEADER)
    throw new UnreadableReportError(`the zip is corrupt: no local header for ${entry.name}`);
  const start = at + 30 + zip.readUInt16LE(at + 26) + zip.readUInt16LE(at + 28);
  if (start + entry.compressedSize > zip.length)
    throw new UnreadableReportError(`the zip is truncated inside ${entry.name}`);
  return zip.subarray(start, start + entry.compressedSize);
}

/**
 * Every file entry of a zip, inflated and CRC-checked, together at most `maxBytes`; refused when it has
 * more than MAX_ZIP_ENTRIES entries, is cut off, corrupt, encrypted, ZIP64, or holds another archive.
 */
export async function unzipBounded(content: Uint8Array, maxBytes: number): Promise<ZipEntry[]> {
  const zip = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const files: ZipEntry[] = [];
  let budget = maxBytes;
  for (const entry of readDirectory(zip)) {
    if (entry.name.endsWith('/')) continue;
    const what = `zip entry ${JSON.stringify(entry.name.slice(0, 100))}`;
    if (ARCHIVE_NAME.test(entry.name))
      throw new UnreadableReportError(`${what} is itself an archive: nested archives are refused`);
    if (entry.flags & ZIP_FLAG_ENCRYPTED) throw new UnreadableReportError(`${what} is encrypted`);
    const data = entryData(zip, entry);
    let inflated: Buffer;
    if (entry.method === ZIP_METHOD_STORED) {
      if (data.length > budget)
        throw inflateFailure({ code: 'ERR_BUFFER_TOO_LARGE' }, what, maxBytes, entry.claimedSize);
      inflated = data;
    } else if (entry.method === ZIP_METHOD_DEFLATE) {
      try {
        const measured = await measureInflated('raw', data, budget);
        // Checked before anything is kept: a wrong CRC or a size other than claimed is a corrupt entry.
        if (measured.crc !== entry.crc) throw new UnreadableReportError(`${what} fails its CRC check: corrupt`);
        // maxOutputLength 0 would mean "no limit" to zlib; an empty entry inflates to nothing anyway.
        inflated = measured.size === 0 ? Buffer.alloc(0) : inflateRawSync(data, { maxOutputLength: measured.size });
      } catch (error) {
        if (error instanceof UnreadableReportError) throw error;
        throw inflateFailure(error, what, maxBytes, entry.claimedSize);
      }
    } else {
      throw new UnreadableReportError(
        `${what} uses compression method ${entry.method}; only stored and deflate are read`,
      );
    }
    if (crc32(inflated) !== entry.crc) throw new UnreadableReportError(`${what} fails its CRC check: corrupt`);
    if (inflated.length !== entry.claimedSize)
      throw new UnreadableReportError(
        `${what} inflates to ${inflated.length} bytes, not the ${entry.claimedSize} its header claims`,
      );
    refuseNested(inflated, what);
    budget -= inflated.length;
    files.push({ name: entry.name, content: inflated });
  }
  return files;
}
