// A raw message's top-level header read as written, without decoding the body (most of a message): where
// it ends and its fields. Used where the header is rewritten or searched on the raw bytes: the inbound
// verdicts (our Authentication-Results removed, read back) and a submission spooled as it came.

/** Where the top-level header ends: just past its blank line (`\r?\n\r?\n`), else the message's end. */
export function headerEnd(raw: Buffer): number {
  // Every blank line starts at a `\n` followed by `\n` or `\r\n`; the first of either ends the header.
  const bare = raw.indexOf('\n\n');
  const crlf = raw.indexOf('\n\r\n');
  if (bare < 0 && crlf < 0) return raw.length;
  return bare >= 0 && (crlf < 0 || bare < crlf) ? bare + 2 : crlf + 3;
}

/**
 * The fields of a header block (latin1), each its first line and the continuation lines (starting with a
 * space or a tab) after it, line ends kept as written; a block's closing blank line is a field of its own.
 */
export function headerFieldsOf(block: string): string[] {
  const fields: string[] = [];
  for (const line of block.split(/(?<=\n)/)) {
    if (fields.length > 0 && /^[ \t]/.test(line)) fields[fields.length - 1] += line;
    else fields.push(line);
  }
  return fields;
}
