// One mailbox string (`a@b` or `Name <a@b>`) read as the address parser reads it, and the bare address
// of one. In mail/ because composing, system mail and the modules all need it; the send request's own
// rules stay in modules/emails/validate.ts.
import addressparser from 'nodemailer/lib/addressparser/index.js';

// dot-atom local part or a quoted string, then a domain of labels (or an address literal).
const ADDRESS =
  /^(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*|"(?:[^"\\\r\n]|\\.)*")@(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}|localhost|\[[0-9a-fA-F:.]+\])$/;
export const LINE_BREAK = /[\r\n]/;

export interface ParsedAddress {
  name: string;
  address: string;
  formatted: string;
}

/** RFC 5321 §4.5.3.1 size limits, in octets. */
const MAX_LOCAL_PART_OCTETS = 64;
const MAX_DOMAIN_OCTETS = 255;
/** A reverse or forward path is the address in angle brackets: 256 octets, so 254 for the address. */
const MAX_PATH_OCTETS = 256;

/** Why an address breaks RFC 5321's size limits, or null when it fits. */
export function addressSizeProblem(address: string): string | null {
  const at = address.lastIndexOf('@');
  const octets = (text: string) => Buffer.byteLength(text, 'utf8');
  if (octets(address.slice(0, at)) > MAX_LOCAL_PART_OCTETS)
    return `has a local part longer than ${MAX_LOCAL_PART_OCTETS} octets (RFC 5321)`;
  if (octets(address.slice(at + 1)) > MAX_DOMAIN_OCTETS)
    return `has a domain longer than ${MAX_DOMAIN_OCTETS} octets (RFC 5321)`;
  if (octets(address) + 2 > MAX_PATH_OCTETS)
    return `is longer than the ${MAX_PATH_OCTETS} octets of an SMTP path (RFC 5321)`;
  return null;
}

// `a@b` or `Words <a@b>` with nothing the address parser would change (no quotes, comments, commas,
// groups, encoded words, runs of spaces): it answers exactly these parts, so they are taken as they
// are. The parser was ~5 % of the accept path's CPU; every other form still goes through it.
const SIMPLE_MAILBOX =
  /^(?:([A-Za-z0-9]+(?: [A-Za-z0-9]+)*) <([A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+)>|([A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+))$/;

/** The address parser's reading of one mailbox string (flattened groups). */
export function mailboxParts(input: string): { name: string; address: string }[] {
  const simple = SIMPLE_MAILBOX.exec(input);
  if (simple) return [{ name: simple[1] ?? '', address: simple[2] ?? simple[3] }];
  return addressparser(input, { flatten: true });
}

/** One mailbox (`a@b` or `Name <a@b>`); null when it is not exactly one valid address. */
export function parseMailbox(input: string): ParsedAddress | null {
  if (LINE_BREAK.test(input)) return null;
  const parsed = mailboxParts(input);
  if (parsed.length !== 1) return null;
  const { name, address } = parsed[0];
  if (!address || !ADDRESS.test(address) || address.length > 320) return null;
  const formatted = name ? `"${name.replace(/(["\\])/g, '\\$1')}" <${address}>` : address;
  return { name, address, formatted };
}

/** The lower-cased bare address of a mailbox string (for suppression and log look-ups). */
export function bareAddress(mailbox: string): string {
  return (parseMailbox(mailbox)?.address ?? mailbox).toLowerCase();
}

const PLAIN_ADDRESS = /^[^\s"<>()]+@[^\s"<>()]+$/;
const FORMATTED_MAILBOX = /^"(?:[^"\\]|\\.)*" <([^\s"<>()]+@[^\s"<>()]+)>$/;

/**
 * Bare, lower-cased address of a mailbox in the form normalizeSend writes (`a@b` or `"Name" <a@b>`)
 * without running the address parser again (the send path asks for every recipient several times);
 * anything else goes through bareAddress.
 */
export function normalizedBareAddress(mailbox: string): string {
  if (PLAIN_ADDRESS.test(mailbox)) return mailbox.toLowerCase();
  const formatted = FORMATTED_MAILBOX.exec(mailbox);
  return formatted ? formatted[1].toLowerCase() : bareAddress(mailbox);
}
