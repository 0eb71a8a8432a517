// Open and click tracking in the HTML of a message, done on a parsed tree (parse5), not on text:
// every <a href> with an http(s) URL is pointed at the signed click redirect, and a 1×1 pixel is
// appended to the body. Documents stay documents; fragments stay fragments.
import { parse, parseFragment, serialize, defaultTreeAdapter, type DefaultTreeAdapterMap } from 'parse5';
import { signLinkToken } from './link-tokens.ts';
import type { RandomBytes } from './random-pool.ts';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];
type ParentNode = DefaultTreeAdapterMap['parentNode'];

export interface TrackingOptions {
  emailId: string;
  publicUrl: string;
  linkSigningKey: Buffer;
  trackOpens: boolean;
  trackClicks: boolean;
  /** URLs left alone (the unsubscribe link must reach its page directly). */
  skipUrls?: string[];
  /** The IVs of the tokens (link-tokens.ts); a call of its own each when absent. */
  randomBytes?: RandomBytes;
}

type TokenOptions = Pick<TrackingOptions, 'emailId' | 'publicUrl' | 'linkSigningKey' | 'randomBytes'>;

export function openPixelUrl(options: TokenOptions): string {
  const token = signLinkToken(options.linkSigningKey, { k: 'o', e: options.emailId }, options.randomBytes);
  return `${options.publicUrl}/t/o/${token}.gif`;
}

export function clickUrl(options: TokenOptions, url: string): string {
  return `${options.publicUrl}/t/c/${signLinkToken(options.linkSigningKey, { k: 'c', e: options.emailId, u: url }, options.randomBytes)}`;
}

function isElement(node: Node): node is Element {
  return 'tagName' in node;
}

function walk(node: Node, visit: (element: Element) => void): void {
  if (isElement(node)) visit(node);
  const children = 'childNodes' in node ? node.childNodes : [];
  for (const child of children) walk(child, visit);
  // <template> keeps its children in a separate fragment.
  if (isElement(node) && node.tagName === 'template' && 'content' in node)
    walk((node as unknown as { content: Node }).content, visit);
}

function findBody(node: Node): Element | null {
  let found: Element | null = null;
  walk(node, (element) => {
    if (!found && element.tagName === 'body') found = element;
  });
  return found;
}

/** The HTML with tracking applied; unchanged when neither kind of tracking is on. */
export function applyTracking(html: string, options: TrackingOptions): string {
  if (!options.trackOpens && !options.trackClicks) return html;
  const isDocument = /<html[\s>]|<body[\s>]|<!doctype/i.test(html);
  const root: ParentNode = isDocument ? parse(html) : parseFragment(html);
  const skip = new Set(options.skipUrls ?? []);
  if (options.trackClicks) {
    walk(root, (element) => {
      if (element.tagName !== 'a') return;
      const href = element.attrs.find((attr) => attr.name === 'href');
      if (!href) return;
      const url = href.value.trim();
      if (!/^https?:\/\//i.test(url) || skip.has(url)) return;
      href.value = clickUrl(options, url);
    });
  }
  if (options.trackOpens) {
    const pixel = defaultTreeAdapter.createElement('img', 'http://www.w3.org/1999/xhtml' as never, [
      { name: 'src', value: openPixelUrl(options) },
      { name: 'width', value: '1' },
      { name: 'height', value: '1' },
      { name: 'alt', value: '' },
      { name: 'style', value: 'display:block;width:1px;height:1px;border:0' },
    ]);
    const parent = isDocument ? (findBody(root) ?? root) : root;
    defaultTreeAdapter.appendChild(parent, pixel);
  }
  return serialize(root);
}
