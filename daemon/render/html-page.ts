// The shell of every page the daemon serves to a browser (unsubscribe, and the pages behind the
// links of system mail): one inline stylesheet allowed by its hash, no script, no external asset,
// and headers that keep the page out of frames, caches and Referer headers (its URL carries a token).
import { createHash } from 'node:crypto';
import type { FastifyReply } from 'fastify';

// Kept in one <style> element: the Content-Security-Policy allows exactly this text by its hash, so
// no style attribute is used anywhere (it would need 'unsafe-inline').
const STYLESHEET = [
  ':root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}',
  'body{max-width:32rem;margin:3rem auto;padding:0 1rem}',
  'h1{font-size:1.5rem;line-height:1.25}',
  'label{display:block;font-weight:600;margin-top:1rem}',
  '.hint{display:block;font-size:.9rem;opacity:.8}',
  'input{box-sizing:border-box;width:100%;font:inherit;padding:.5rem;margin-top:.25rem;border:1px solid #888;border-radius:.25rem}',
  'input[readonly]{border-style:dashed}',
  'button{font:inherit;margin-top:1.5rem;padding:.6rem 1.2rem;border:0;border-radius:.25rem;background:#1d4ed8;color:#fff;cursor:pointer}',
  'button:focus-visible,input:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}',
  '.error{border-left:4px solid #b91c1c;padding:.5rem .75rem;background:rgba(185,28,28,.08)}',
  'code{font-size:.9rem;word-break:break-all}',
].join('');

const STYLE_HASH = createHash('sha256').update(STYLESHEET).digest('base64');

/** Nothing may load, run or frame; forms post only to this origin. */
export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${STYLE_HASH}'`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface PageContent {
  /** The page's language (the `lang` attribute). */
  lang: string;
  /** Plain text: escaped here. */
  title: string;
  /** HTML, already escaped by its builder. */
  body: string;
}

export function renderPage(content: PageContent): string {
  return (
    `<!doctype html><html lang="${escapeHtml(content.lang)}"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">` +
    `<title>${escapeHtml(content.title)}</title><style>${STYLESHEET}</style></head>` +
    `<body><main>${content.body}</main></body></html>`
  );
}

/**
 * The headers of every page: HTML, never cached, never framed, never named in a Referer to another
 * site. `same-origin`, not `no-referrer`: under no-referrer a browser sends `Origin: null` even with a
 * form posted to its own page, and the account pages refuse a POST whose Origin is not PUBLIC_URL's
 * (pages/form-origin.ts); the URL's token only goes back to the server it came from.
 */
export function setPageHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers({
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': PAGE_CONTENT_SECURITY_POLICY,
    'x-frame-options': 'DENY',
    'referrer-policy': 'same-origin',
    'x-content-type-options': 'nosniff',
    'cross-origin-opener-policy': 'same-origin',
  });
}

/** Sends a page with its headers and status. */
export function sendPage(reply: FastifyReply, statusCode: number, content: PageContent): FastifyReply {
  return setPageHeaders(reply).code(statusCode).send(renderPage(content));
}
