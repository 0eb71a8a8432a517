// The template CI gate: render a template file with sample data (the daemon's own Liquid renderer for
// HTML templates, the daemon's sandbox endpoint for React Email), compare it with the published version,
// and lint it for the mistakes that hurt delivery. Used by `svc templates diff|check|preview`.
import { Liquid } from 'liquidjs';
import { parse as parseHtml } from 'parse5';
import { LIQUID_LIMITS, renderLiquid, textFromHtml, type TemplatePart } from '../../daemon/render/liquid.ts';
import { errorText } from '../../daemon/errors.ts';
import type { SvcClient } from '../client.ts';
import type { DomainBody } from '../../shared/schemas/domains.ts';
import { ApiRequestError, CliFailure, EXIT } from '../errors.ts';
import { findTemplate } from './template-files.ts';
import type { TemplateFile } from './template-files.ts';

export interface Rendered {
  subject: string;
  html: string;
  text: string;
}

/** Sample data: front-matter `data:` (inline JSON), overridden key by key by --data. */
export function sampleData(file: TemplateFile, extra: Record<string, unknown> | undefined): Record<string, unknown> {
  let fromFile: Record<string, unknown> = {};
  const inline = file.fields.data;
  if (inline) {
    try {
      fromFile = JSON.parse(inline) as Record<string, unknown>;
    } catch {
      throw new CliFailure(
        `${file.slug}: front-matter "data:" is not JSON (write it on one line, e.g. data: {"name":"Ada"}).`,
        EXIT.usage,
        'BAD_FILE',
      );
    }
  }
  return { ...fromFile, ...extra };
}

/**
 * The size error of a file too large for the template engine to parse, or null: said in the same words
 * as the rendered HTML's (HTML_TOO_LARGE), not as the engine's "parse length limit exceeded".
 */
export function sourceTooLarge(file: TemplateFile): string | null {
  const largest = Math.max(file.content.length, file.text?.length ?? 0, file.subject.length);
  if (largest <= LIQUID_LIMITS.parseChars) return null;
  const kb = (n: number) => Math.round(n / 1024);
  return (
    `The HTML is ${kb(Buffer.byteLength(file.content, 'utf8'))} KB; Gmail clips messages over ${kb(GMAIL_CLIP_BYTES)} KB, ` +
    `and a template part over ${kb(LIQUID_LIMITS.parseChars)} KB is not parsed at all.`
  );
}

/** Renders the file as the daemon would send it: subject, HTML, and the text part (given or derived). */
export async function renderFile(
  client: SvcClient,
  file: TemplateFile,
  data: Record<string, unknown>,
): Promise<Rendered> {
  const tooLarge = sourceTooLarge(file);
  if (tooLarge) throw new CliFailure(tooLarge, EXIT.usage, 'HTML_TOO_LARGE');
  const subject = await renderLiquid('subject', file.subject, data);
  const html =
    file.editorMode === 'react-email'
      ? (await client.renderReactEmail(file.content, data)).html
      : await renderLiquid('htmlBody', file.content, data);
  const text =
    file.text !== undefined ? await renderLiquid('textBody', file.text, data) : html ? textFromHtml(html) : '';
  return { subject, html, text };
}

/** The published version of the file's slug and locale rendered by the daemon's preview endpoint, or null. */
export async function renderPublished(
  client: SvcClient,
  file: TemplateFile,
  data: Record<string, unknown>,
): Promise<Rendered | null> {
  const template = await findTemplate(client, file.slug);
  if (!template) return null;
  const locale = file.locale ?? template.defaultLocale;
  const published = template.versions.find((version) => version.published && version.locale === locale);
  if (!published) return null;
  return client.previewTemplateVersion(template.id, published.id, data);
}

// ---- unified diff ----

/** Line diff by longest common subsequence, as unified hunks with `context` lines around changes. */
export function unifiedDiff(before: string, after: string, labels: [string, string], context = 3): string {
  const a = before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  type Op = { kind: ' ' | '-' | '+'; line: string; ai: number; bi: number };
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ kind: ' ', line: a[i], ai: i++, bi: j++ });
    else if (j < b.length && (i >= a.length || lcs[i][j + 1] >= lcs[i + 1][j]))
      ops.push({ kind: '+', line: b[j], ai: i, bi: j++ });
    else ops.push({ kind: '-', line: a[i], ai: i++, bi: j });
  }
  if (!ops.some((op) => op.kind !== ' ')) return '';
  const out = [`--- ${labels[0]}`, `+++ ${labels[1]}`];
  let index = 0;
  while (index < ops.length) {
    const firstChange = ops.findIndex((op, k) => k >= index && op.kind !== ' ');
    if (firstChange === -1) break;
    const start = Math.max(index, firstChange - context);
    let end = firstChange;
    // Extend the hunk while the next change is within 2 × context unchanged lines.
    for (let k = firstChange; k < ops.length; k++) {
      if (ops[k].kind !== ' ') end = k;
      else if (k - end > context * 2) break;
    }
    const stop = Math.min(ops.length, end + context + 1);
    const hunk = ops.slice(start, stop);
    const aCount = hunk.filter((op) => op.kind !== '+').length;
    const bCount = hunk.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${hunk[0].ai + (aCount ? 1 : 0)},${aCount} +${hunk[0].bi + (bCount ? 1 : 0)},${bCount} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.line}`);
    index = stop;
  }
  return out.join('\n');
}

// ---- lint ----

export interface Finding {
  severity: 'error' | 'warning';
  code: string;
  message: string;
}

/** Gmail clips messages whose HTML is larger than this. */
export const GMAIL_CLIP_BYTES = 102 * 1024;

const analyser = new Liquid();

/** Global variables a Liquid source reads (loop variables and assigns excluded), as dotted paths. */
export function variablesUsed(source: string): string[] {
  return analyser.globalFullVariablesSync(analyser.parse(source));
}

function hasSample(data: Record<string, unknown>, path: string): boolean {
  let value: unknown = data;
  for (const segment of path.split(/\.|\[/)) {
    if (Array.isArray(value)) return true;
    if (value === null || typeof value !== 'object' || !(segment in (value as object))) return false;
    value = (value as Record<string, unknown>)[segment];
  }
  return true;
}

interface HtmlNode {
  nodeName: string;
  attrs?: { name: string; value: string }[];
  childNodes?: HtmlNode[];
  content?: HtmlNode;
}

function walk(node: HtmlNode, visit: (node: HtmlNode) => void): void {
  visit(node);
  for (const child of node.childNodes ?? []) walk(child, visit);
  if (node.content) walk(node.content, visit);
}

const attr = (node: HtmlNode, name: string) => node.attrs?.find((a) => a.name === name)?.value;

export interface LintContext {
  file: TemplateFile;
  data: Record<string, unknown>;
  /** The tenant's domains, or null when they could not be read (the From check is then a warning). */
  domains: DomainBody[] | null;
}

export async function lintTemplate(client: SvcClient, { file, data, domains }: LintContext): Promise<Finding[]> {
  const findings: Finding[] = [];
  const error = (code: string, message: string) => findings.push({ severity: 'error', code, message });
  const warning = (code: string, message: string) => findings.push({ severity: 'warning', code, message });

  const tooLarge = sourceTooLarge(file);
  if (tooLarge) {
    error('HTML_TOO_LARGE', tooLarge);
    return findings;
  }
  // Liquid parses, and every variable it reads has sample data.
  const parts: [TemplatePart, string | undefined][] = [
    ['subject', file.subject],
    ['htmlBody', file.editorMode === 'html' ? file.content : undefined],
    ['textBody', file.text],
  ];
  let parses = true;
  for (const [part, source] of parts) {
    if (source === undefined) continue;
    let used: string[];
    try {
      used = variablesUsed(source);
    } catch (reason) {
      parses = false;
      error('LIQUID_INVALID', `${part}: ${errorText(reason).split('\n')[0]}`);
      continue;
    }
    for (const variable of used) {
      if (!hasSample(data, variable))
        error(
          'VARIABLE_WITHOUT_SAMPLE',
          `${part} uses {{ ${variable} }} but the sample data has no "${variable}" (add it to front-matter "data:" or --data).`,
        );
    }
  }
  if (!parses) return findings;

  let rendered: Rendered;
  try {
    rendered = await renderFile(client, file, data);
  } catch (reason) {
    if (reason instanceof ApiRequestError && reason.status >= 500) throw reason;
    error('RENDER_FAILED', errorText(reason));
    return findings;
  }

  if (rendered.text.trim() === '')
    error(
      'TEXT_PART_MISSING',
      'No text part: give "text:" in front-matter, or HTML with visible text to derive it from.',
    );
  const size = Buffer.byteLength(rendered.html, 'utf8');
  if (size > GMAIL_CLIP_BYTES)
    error('HTML_TOO_LARGE', `The HTML is ${Math.round(size / 1024)} KB; Gmail clips messages over 102 KB.`);

  const document = parseHtml(rendered.html) as unknown as HtmlNode;
  let imagesWithoutAlt = 0;
  const insecure = new Set<string>();
  const hrefs: string[] = [];
  walk(document, (node) => {
    if (node.nodeName === 'img' && attr(node, 'alt') === undefined) imagesWithoutAlt++;
    if (node.nodeName === 'a') {
      const href = (attr(node, 'href') ?? '').trim();
      hrefs.push(href);
      if (/^http:\/\//i.test(href)) insecure.add(href);
    }
    if (node.nodeName === 'img' && /^http:\/\//i.test(attr(node, 'src') ?? '')) insecure.add(attr(node, 'src')!);
  });
  if (imagesWithoutAlt)
    warning(
      'IMAGE_WITHOUT_ALT',
      `${imagesWithoutAlt} image${imagesWithoutAlt === 1 ? '' : 's'} without alt text (shown when images are blocked, read by screen readers).`,
    );
  for (const link of insecure)
    warning('LINK_NOT_HTTPS', `${link} is not https (mail clients warn, and the link leaks in transit).`);

  const from = file.fields.from;
  if (from) {
    const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1]?.toLowerCase();
    if (!domain) error('FROM_INVALID', `From "${from}" is not an e-mail address.`);
    else if (domains === null)
      warning(
        'FROM_NOT_CHECKED',
        `Could not read the tenant's domains to check ${domain} (the API key needs the domains:read scope).`,
      );
    else {
      const known = domains.find((candidate) => candidate.name.toLowerCase() === domain);
      // "verified" means SPF and DKIM passed; a DKIM record seen broken since then is not ready either.
      const dkim = known?.records.find((record) => record.record === 'dkim');
      const dkimReady = dkim !== undefined && !['missing', 'mismatch', 'error'].includes(dkim.status);
      if (!known)
        error(
          'FROM_DOMAIN_UNKNOWN',
          `From domain ${domain} is not a domain of this tenant: add it with \`svc domains add ${domain}\`.`,
        );
      else if (known.status !== 'verified' || !dkimReady)
        error(
          'FROM_DOMAIN_NOT_VERIFIED',
          `From domain ${domain} is ${known.status}${dkimReady ? '' : ', DKIM not verified'}: run \`svc domains verify ${domain}\`.`,
        );
    }
  }

  const broadcast = /^(true|yes|broadcast)$/i.test(
    file.fields.broadcast ?? file.fields.kind ?? file.fields.category ?? '',
  );
  if (broadcast) {
    const sources = `${file.content}\n${file.text ?? ''}`;
    const linked = hrefs.some((href) => /unsubscribe/i.test(href)) || /\{\{\s*unsubscribe/i.test(sources);
    if (!linked)
      error(
        'UNSUBSCRIBE_MISSING',
        'A broadcast template needs an unsubscribe link (e.g. <a href="{{ unsubscribe_url }}">Unsubscribe</a>).',
      );
  }
  return findings;
}

/** The tenant's domains for the From check; null when this credential may not read them. */
export async function readDomains(client: SvcClient): Promise<DomainBody[] | null> {
  try {
    return await client.listDomains();
  } catch (reason) {
    if (reason instanceof ApiRequestError && (reason.status === 403 || reason.status === 401)) return null;
    throw reason;
  }
}
