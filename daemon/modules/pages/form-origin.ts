// Where a form POST comes from, checked against PUBLIC_URL's origin as OWASP's CSRF cheat sheet
// recommends ("Verifying Origin with standard headers"): defence in depth beside the signed form
// guard and its SameSite=Strict cookie (form-guard.ts), which stay the primary control.
// - `Origin` present: it must be PUBLIC_URL's origin. `Origin: null` (a sandboxed frame, a page with
//   `Referrer-Policy: no-referrer`, a redirect across sites) is not ours and is refused.
// - No `Origin`, a `Referer`: its origin must be PUBLIC_URL's.
// - Neither: accepted, as the cheat sheet allows when a token is the primary control. Every current
//   browser sends `Origin` on a form POST (and our pages' `Referrer-Policy: same-origin` keeps it a
//   real origin on our own forms), so a request with neither comes from a program or a proxy that
//   strips both; such a client cannot carry a person's SameSite=Strict cookie across sites anyway, and
//   the guard still has to hold.

export type FormOrigin = { ours: true } | { ours: false; seen: string };

/** What the refusal page may quote of a stranger's header. */
const MAX_QUOTED_CHARS = 200;

function originOfReferer(referer: string): string {
  try {
    return new URL(referer).origin;
  } catch {
    return '(an unreadable Referer)';
  }
}

/** Whether a form POST's `Origin` (or, without one, its `Referer`) names `expectedOrigin`. */
export function formPostOrigin(
  headers: { origin?: string | string[]; referer?: string | string[] },
  expectedOrigin: string,
): FormOrigin {
  const one = (value: string | string[] | undefined) => (Array.isArray(value) ? value.join(', ') : value);
  const origin = one(headers.origin);
  const referer = one(headers.referer);
  const seen = origin ?? (referer === undefined ? null : originOfReferer(referer));
  if (seen === null || seen === expectedOrigin) return { ours: true };
  return { ours: false, seen: seen.slice(0, MAX_QUOTED_CHARS) };
}
