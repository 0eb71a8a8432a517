// The account pages as HTML, in the shell every browser page shares (render/html-page.ts). Forms
// have no action: they post back to the page's own URL (its link token and language included), so
// they work as well behind a proxy that mounts the service under a path.
import { escapeHtml, type PageContent } from '../../render/html-page.ts';
import type { InvitationPreview } from '../tenants/invitations.ts';
import type { FormProblem, PageLocale, PageStrings } from './strings.ts';
import { pageStrings } from './strings.ts';
import type { FormPurpose } from './form-guard.ts';

/** What every form carries: the link's token, its CSRF guard and, when it came back, why. */
export interface FormState {
  token: string;
  guard: string;
  problem?: FormProblem;
}

const PASSWORD_PROBLEMS: ReadonlySet<FormProblem> = new Set([
  'password-too-short',
  'password-too-long',
  'passwords-differ',
]);

function problemNotice(t: PageStrings, problem: FormProblem | undefined): string {
  if (!problem) return '';
  return `<div class="error" role="alert" id="form-problem"><p><strong>${escapeHtml(t.errorHeading)}</strong> ${escapeHtml(t.problems[problem])}</p></div>`;
}

/** Names a field's hint, and marks the field when the problem is about it, for screen readers. */
function describedBy(hintId: string, invalid: boolean): string {
  return invalid ? ` aria-describedby="${hintId} form-problem" aria-invalid="true"` : ` aria-describedby="${hintId}"`;
}

function hiddenFields(tokenName: string, state: FormState): string {
  return (
    `<input type="hidden" name="${tokenName}" value="${escapeHtml(state.token)}">` +
    `<input type="hidden" name="guard" value="${escapeHtml(state.guard)}">`
  );
}

function passwordFields(t: PageStrings, state: FormState): string {
  const wrong = state.problem !== undefined && PASSWORD_PROBLEMS.has(state.problem);
  return (
    `<label for="password">${escapeHtml(t.newPassword)}</label>` +
    `<span class="hint" id="password-hint">${escapeHtml(t.passwordHint)}</span>` +
    `<input id="password" name="password" type="password" autocomplete="new-password" required${describedBy('password-hint', wrong)}>` +
    `<label for="repeated-password">${escapeHtml(t.confirmPassword)}</label>` +
    `<input id="repeated-password" name="repeatedPassword" type="password" autocomplete="new-password" required${describedBy('password-hint', wrong)}>`
  );
}

/** A page whose form carries the link's token, with `fields` between the intro and the button. */
function linkFormPage(
  locale: PageLocale,
  text: { title: string; intro: string; submit: string },
  state: FormState,
  fields: string,
): PageContent {
  const t = pageStrings(locale);
  return {
    lang: locale,
    title: text.title,
    body:
      `<h1>${escapeHtml(text.title)}</h1>${problemNotice(t, state.problem)}<p>${escapeHtml(text.intro)}</p>` +
      `<form method="post">${hiddenFields('token', state)}${fields}` +
      `<button type="submit">${escapeHtml(text.submit)}</button></form>`,
  };
}

export function resetPasswordPage(locale: PageLocale, state: FormState): PageContent {
  const t = pageStrings(locale);
  return linkFormPage(locale, t.reset, state, passwordFields(t, state));
}

export function verifyEmailPage(locale: PageLocale, state: FormState): PageContent {
  return linkFormPage(locale, pageStrings(locale).verify, state, '');
}

export function invitationPage(
  locale: PageLocale,
  state: FormState & { invitation: InvitationPreview; name: string },
): PageContent {
  const t = pageStrings(locale);
  const intro = t.invitation.intro
    .replace('{tenant}', `<strong>${escapeHtml(state.invitation.tenantName)}</strong>`)
    .replace('{role}', `<strong>${escapeHtml(state.invitation.role)}</strong>`);
  return {
    lang: locale,
    title: t.invitation.title,
    body:
      `<h1>${escapeHtml(t.invitation.title)}</h1>${problemNotice(t, state.problem)}<p>${intro}</p>` +
      `<form method="post">${hiddenFields('invitation', state)}` +
      `<label for="email">${escapeHtml(t.email)}</label>` +
      `<input id="email" type="email" value="${escapeHtml(state.invitation.email)}" autocomplete="username" readonly>` +
      `<label for="name">${escapeHtml(t.name)}</label><span class="hint" id="name-hint">${escapeHtml(t.nameHint)}</span>` +
      `<input id="name" name="name" type="text" autocomplete="name" maxlength="200" value="${escapeHtml(state.name)}"${describedBy('name-hint', state.problem === 'name-too-long')}>` +
      `${passwordFields(t, state)}<button type="submit">${escapeHtml(t.invitation.submit)}</button></form>`,
  };
}

function flowStrings(t: PageStrings, purpose: FormPurpose) {
  switch (purpose) {
    case 'reset-password':
      return { done: t.reset, deadLink: t.deadLink.reset, signIn: true };
    case 'verify-email':
      return { done: t.verify, deadLink: t.deadLink.verify, signIn: false };
    case 'register':
      return { done: t.invitation, deadLink: t.deadLink.invitation, signIn: true };
  }
}

/** Where a form leads after it was sent (POST-redirect-GET): what happened and what to do next. */
export function donePage(locale: PageLocale, purpose: FormPurpose): PageContent {
  const t = pageStrings(locale);
  const flow = flowStrings(t, purpose);
  const signIn = flow.signIn ? `<p>${escapeHtml(t.signIn)}</p>` : '';
  return {
    lang: locale,
    title: flow.done.doneTitle,
    body: `<h1>${escapeHtml(flow.done.doneTitle)}</h1><p role="status">${escapeHtml(flow.done.done)}</p>${signIn}`,
  };
}

/** Flows whose dead link offers a form that mails a new link (an invitation comes from a person). */
export const NEW_LINK_PURPOSES = ['reset-password', 'verify-email'] as const;
export type NewLinkPurpose = (typeof NEW_LINK_PURPOSES)[number];

/**
 * An unknown, used, replaced or expired link: say so, and how to get a working one — for a reset or a
 * verification, a form that mails a new link (relative action: it works under a proxy's path too).
 */
export function deadLinkPage(locale: PageLocale, purpose: FormPurpose): PageContent {
  const t = pageStrings(locale);
  const form = (NEW_LINK_PURPOSES as readonly string[]).includes(purpose)
    ? `<form method="post" action="${purpose}/new-link?lang=${locale}">` +
      `<label for="email">${escapeHtml(t.email)}</label>` +
      `<input id="email" name="email" type="email" autocomplete="email" maxlength="320" required>` +
      `<button type="submit">${escapeHtml(t.newLink.submit)}</button></form>`
    : '';
  return {
    lang: locale,
    title: t.deadLink.title,
    body: `<h1>${escapeHtml(t.deadLink.title)}</h1><p>${escapeHtml(flowStrings(t, purpose).deadLink)}</p>${form}`,
  };
}

/** After the new-link form: the same words whether or not the address has an account (nothing to probe). */
export function newLinkSentPage(locale: PageLocale): PageContent {
  const t = pageStrings(locale);
  return {
    lang: locale,
    title: t.newLink.sentTitle,
    body: `<h1>${escapeHtml(t.newLink.sentTitle)}</h1><p role="status">${escapeHtml(t.newLink.sent)}</p>`,
  };
}

/**
 * A form sent from another site: refused, with no new form (that would replace the cookie's nonce).
 * `origin`: where it was sent from, when its Origin or Referer said so (form-origin.ts).
 */
export function foreignFormPage(locale: PageLocale, origin?: { seen: string; expected: string }): PageContent {
  const t = pageStrings(locale);
  const from = origin
    ? `<p>${escapeHtml(t.foreignForm.from.replace('{origin}', origin.seen).replace('{expected}', origin.expected))}</p>`
    : '';
  return {
    lang: locale,
    title: t.foreignForm.title,
    body: `<h1>${escapeHtml(t.foreignForm.title)}</h1><p role="alert">${escapeHtml(t.foreignForm.text)}</p>${from}`,
  };
}
