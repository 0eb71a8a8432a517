// Liquid for subjects and bodies. Output is HTML-escaped in HTML bodies (so `{{ name }}` cannot inject
// markup) and left alone in subjects and text parts. Unknown filters are errors, not silent no-ops;
// includes and layouts have nothing to load (no file system); parse size, render time and memory are
// bounded so a template cannot hold the worker.
import { Liquid } from 'liquidjs';
import { compile } from 'html-to-text';
import { UnprocessableError, errorText } from '../errors.ts';

export const LIQUID_LIMITS = {
  /** Characters parsed per template. */
  parseChars: 500_000,
  /** Milliseconds per render() call. */
  renderMs: 1000,
  /** liquidjs's allocation budget (strings and arrays created by filters and loops). */
  memory: 20_000_000,
} as const;

export type TemplatePart = 'subject' | 'htmlBody' | 'textBody';

const PART_NAMES: Record<TemplatePart, string> = { subject: 'subject', htmlBody: 'HTML body', textBody: 'text body' };

function engine(escapeHtml: boolean): Liquid {
  return new Liquid({
    strictFilters: true,
    strictVariables: false,
    ownPropertyOnly: true,
    outputEscape: escapeHtml ? 'escape' : undefined,
    templates: {},
    parseLimit: LIQUID_LIMITS.parseChars,
    renderLimit: LIQUID_LIMITS.renderMs,
    memoryLimit: LIQUID_LIMITS.memory,
    cache: false,
  });
}

const htmlEngine = engine(true);
const plainEngine = engine(false);

function engineFor(part: TemplatePart): Liquid {
  return part === 'htmlBody' ? htmlEngine : plainEngine;
}

function problem(part: TemplatePart, error: unknown, phase: 'parse' | 'render'): UnprocessableError {
  const raw = errorText(error);
  const message = raw.split('\n')[0].slice(0, 300);
  const verb = phase === 'parse' ? 'is not valid Liquid' : 'could not be rendered';
  const code = /limit exceeded/i.test(message)
    ? 'TEMPLATE_LIMIT_EXCEEDED'
    : phase === 'parse'
      ? 'TEMPLATE_INVALID'
      : 'TEMPLATE_RENDER_FAILED';
  return new UnprocessableError(`The template's ${PART_NAMES[part]} ${verb}: ${message}.`, code);
}

/** Parses without rendering: unknown filters and syntax errors surface when a version is saved. */
export function checkLiquid(part: TemplatePart, source: string): void {
  try {
    engineFor(part).parse(source);
  } catch (error) {
    throw problem(part, error, 'parse');
  }
}

/**
 * The last few parsed sources per part: a batch renders one source for each of its 100 recipients,
 * and parsing a 100 KB body took more of the API's time than everything else (bench/mta.ts). Parsed
 * templates are immutable, rendered many times with different data.
 */
const PARSED_KEPT = 8;
const parsedSources = new Map<string, ReturnType<Liquid['parse']>>();

function parsed(part: TemplatePart, source: string): ReturnType<Liquid['parse']> {
  const key = `${part}\u0000${source}`;
  const kept = parsedSources.get(key);
  if (kept) return kept;
  let templates;
  try {
    templates = engineFor(part).parse(source);
  } catch (error) {
    throw problem(part, error, 'parse');
  }
  if (parsedSources.size >= PARSED_KEPT) parsedSources.delete(parsedSources.keys().next().value!);
  parsedSources.set(key, templates);
  return templates;
}

export async function renderLiquid(part: TemplatePart, source: string, data: Record<string, unknown>): Promise<string> {
  const liquid = engineFor(part);
  const templates = parsed(part, source);
  try {
    const output = String(await liquid.render(templates, data));
    // A subject is a header: line breaks from data must not start new header lines.
    return part === 'subject' ? output.replace(/[\r\n]+/g, ' ').trim() : output;
  } catch (error) {
    throw problem(part, error, 'render');
  }
}

// html-to-text's convert() compiles its options (the selectors' decision tree) at every call: 0.39 ms of
// CPU a message of a campaign's drain, against 0.011 ms for the compiled function (issue 51: a campaign
// to 100,000 contacts spent more on this than on anything but the DKIM signature). Compiled at first use.
let compiledTextFromHtml: ((html: string) => string) | null = null;

/** The text part of a message whose template gives only HTML. */
export function textFromHtml(html: string): string {
  compiledTextFromHtml ??= compile({
    wordwrap: 78,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    ],
  });
  return compiledTextFromHtml(html);
}
