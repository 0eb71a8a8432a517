// Turning what a person typed into the one ASCII form a domain is stored and looked up under. In mail/
// because composing and system mail need it as much as the domains module does.
import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import { ValidationError } from '../errors.ts';

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function invalid(message: string): ValidationError {
  return new ValidationError(message, [{ field: 'name', message }]);
}

/** `Bücher.Example.` → `xn--bcher-kva.example`; throws ValidationError for anything that is not a mail domain. */
export function normalizeDomainName(input: string): string {
  const trimmed = input.trim().replace(/\.$/, '');
  if (trimmed === '') throw invalid('The domain name is empty.');
  if (isIP(trimmed) !== 0 || isIP(trimmed.replace(/^\[|\]$/g, '')) !== 0) {
    throw invalid('An IP address is not a domain: give the name mail is sent from, e.g. example.com.');
  }
  if (/[\s@/:]/.test(trimmed))
    throw invalid(`"${trimmed}" is not a domain name: give only the part after @, e.g. example.com.`);
  const ascii = domainToASCII(trimmed).toLowerCase();
  if (ascii === '') throw invalid(`"${trimmed}" is not a valid domain name.`);
  if (ascii.length > 253) throw invalid('The domain name is longer than 253 characters.');
  const labels = ascii.split('.');
  if (labels.length < 2) throw invalid(`"${trimmed}" has a single label: give a full domain such as ${trimmed}.com.`);
  for (const label of labels) {
    if (!LABEL.test(label))
      throw invalid(
        `"${label}" is not a valid label in a domain name (letters, digits and inner hyphens, at most 63).`,
      );
  }
  if (/^\d+$/.test(labels[labels.length - 1])) throw invalid(`"${trimmed}" does not end in a top-level domain.`);
  return ascii;
}

export function unicodeDomainName(ascii: string): string {
  return domainToUnicode(ascii) || ascii;
}

/** The domain part of an address or bare domain, normalized; null when it is not a domain. */
export function senderDomainOf(addressOrDomain: string): string | null {
  const at = addressOrDomain.lastIndexOf('@');
  const raw = (at >= 0 ? addressOrDomain.slice(at + 1) : addressOrDomain).replace(/>\s*$/, '');
  try {
    return normalizeDomainName(raw);
  } catch {
    return null;
  }
}

/** The domain and each parent that still has two labels: a.b.example.com → [a.b.example.com, b.example.com, example.com]. */
export function domainAndParents(domain: string): string[] {
  const labels = domain.split('.');
  const names: string[] = [];
  for (let i = 0; i <= labels.length - 2; i++) names.push(labels.slice(i).join('.'));
  return names;
}
