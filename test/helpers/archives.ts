// Zip and gzip files written byte by byte, so that tests can make them lie: sizes and CRCs that
// headers claim, entries by the thousand, archives inside archives, cut-off files. Also deflate
// streams that inflate to a gigabyte from about a megabyte, built without deflating a gigabyte.
import { constants, crc32, deflateRawSync } from 'node:zlib';

export interface ZipFile {
  name: string;
  content: Buffer;
  /** The compressed bytes as stored (default: deflate of content, or content itself when stored). */
  data?: Buffer;
  stored?: boolean;
  /** What the local and central headers claim (default: the truth). */
  claimedSize?: number;
  crc?: number;
}

/** A zip with each file's local header, its data, the central directory and the end record. */
export function zipArchive(files: ZipFile[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const file of files) {
    const name = Buffer.from(file.name, 'utf8');
    const data = file.data ?? (file.stored ? file.content : deflateRawSync(file.content));
    const crc = file.crc ?? crc32(file.content);
    const size = file.claimedSize ?? file.content.length;
    const method = file.stored ? 0 : 8;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A gzip member around a raw deflate stream, with the CRC and ISIZE given (they may lie). */
export function gzipMember(deflated: Buffer, crc: number, claimedSize: number): Buffer {
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(claimedSize >>> 0, 4);
  return Buffer.concat([header, deflated, trailer]);
}

/**
 * A raw deflate stream inflating to `repeat` copies of `block`: one full-flushed segment (the
 * dictionary starts afresh after it, so copies of it follow each other validly), repeated, then the
 * final empty block. 1 MiB of XML-ish text × 1024 ≈ 1 GiB from about a megabyte.
 */
export function repeatedDeflate(block: Buffer, repeat: number): Buffer {
  const segment = deflateRawSync(block, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const finalBlock = deflateRawSync(Buffer.alloc(0));
  return Buffer.concat([...Array.from({ length: repeat }, () => segment), finalBlock]);
}
