// Just enough MIME for machine-written reports (RFC 6522 multipart/report): the parts with their
// content types, decoded. mailparser folds message/delivery-status and inline message/rfc822 parts into
// the text body, which loses exactly the parts a DSN or an ARF report is about.

export interface MimePart {
  contentType: string;
  params: Record<string, string>;
  headers: Fields;
  body: string;
}

/** Header fields by lower-case name, each with every value in order (unfolded). */
export type Fields = Map<string, string[]>;

/** `Name: value` lines with continuation lines, as in a message header or a DSN/ARF field block. */
export function parseFields(block: string): Fields {
  const fields: Fields = new Map();
  let current: { name: string; value: string } | null = null;
  const flush = () => {
    if (!current) return;
    const list = fields.get(current.name) ?? [];
    list.push(current.value.trim());
    fields.set(current.name, list);
  };
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && current) {
      current.value += ` ${line.trim()}`;
      continue;
    }
    flush();
    const colon = line.indexOf(':');
    current = colon > 0 ? { name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1) } : null;
  }
  flush();
  return fields;
}

/** The blank-line separated field blocks of a message/delivery-status body (per-message, then per-recipient). */
export function parseFieldBlocks(body: string): Fields[] {
  return body
    .split(/\r?\n[ \t]*\r?\n/)
    .map((block) => block.trim())
    .filter((block) => block.length > 0)
    .map(parseFields);
}

export function first(fields: Fields, name: string): string | null {
  return fields.get(name)?.[0] ?? null;
}

function parseContentType(value: string | null): { type: string; params: Record<string, string> } {
  const [type, ...rest] = (value ?? 'text/plain').split(';');
  const params: Record<string, string> = {};
  for (const param of rest) {
    const eq = param.indexOf('=');
    if (eq > 0)
      params[param.slice(0, eq).trim().toLowerCase()] = param
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
  }
  return { type: type.trim().toLowerCase(), params };
}

function decode(body: string, encoding: string | null): string {
  switch ((encoding ?? '').toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    case 'quoted-printable':
      return body
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    default:
      return body;
  }
}

function splitHead(text: string): { head: string; body: string } {
  const match = /\r?\n\r?\n/.exec(text);
  return match
    ? { head: text.slice(0, match.index), body: text.slice(match.index + match[0].length) }
    : { head: text, body: '' };
}

const MAX_DEPTH = 4;

function leafParts(text: string, depth: number): MimePart[] {
  const { head, body } = splitHead(text);
  const headers = parseFields(head);
  const { type, params } = parseContentType(first(headers, 'content-type'));
  if (!type.startsWith('multipart/') || !params.boundary || depth >= MAX_DEPTH) {
    return [{ contentType: type, params, headers, body: decode(body, first(headers, 'content-transfer-encoding')) }];
  }
  const delimiter = `--${params.boundary}`;
  const sections = body.split(
    new RegExp(`^${delimiter.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?:--)?[ \t]*\\r?$\\n?`, 'm'),
  );
  // Before the first delimiter is the preamble, after the closing one the epilogue.
  return sections.slice(1, -1).flatMap((section) => leafParts(section, depth + 1));
}

export interface ReportMessage {
  headers: Fields;
  /** report-type of a multipart/report (delivery-status, feedback-report), else null. */
  reportType: string | null;
  parts: MimePart[];
}

/** The message's header and its leaf parts; a report nested in multipart/mixed (some gateways) is found too. */
export function readReport(raw: string): ReportMessage {
  const { head } = splitHead(raw);
  const headers = parseFields(head);
  const nested = leafParts(raw, 0);
  let reportType: string | null = null;
  const top = parseContentType(first(headers, 'content-type'));
  if (top.type === 'multipart/report') reportType = top.params['report-type']?.toLowerCase() ?? null;
  else if (nested.some((part) => part.contentType === 'message/feedback-report')) reportType = 'feedback-report';
  else if (nested.some((part) => part.contentType === 'message/delivery-status')) reportType = 'delivery-status';
  return { headers, reportType, parts: nested };
}
