// What the account pages do, with the very services and rules of the API behind them: the API's
// body schemas check the input (password length and all), and resetPassword, verifyEmail and
// registerAdmin act. Only reading whether a link still works is new, and it never uses the link:
// mail scanners open links, so only the POST from the page acts.
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { findLiveOneTimeToken } from '../auth/tokens.ts';
import { requestEmailVerification, requestPasswordReset, resetPassword, verifyEmail } from '../auth/recovery.ts';
import { registerAdmin, type AuthCaller, type AuthDeps } from '../auth/service.ts';
import { previewInvitation, type InvitationPreview } from '../tenants/invitations.ts';
import { ApiError } from '../../errors.ts';
import { RegisterBody, ResetPasswordBody } from '../../../shared/schemas/auth.ts';
import type { FormProblem } from './strings.ts';

export type PagesDeps = AuthDeps;

/** How a form ended: done, back with a problem in a field, or the link no longer works. */
export type FormOutcome = { kind: 'done' } | { kind: 'problem'; problem: FormProblem } | { kind: 'dead-link' };

// The address of an invitation comes from the invitation itself: only what the person types is checked.
const InvitationSignUp = Type.Pick(RegisterBody, ['password', 'name']);
type CheckedBody = typeof ResetPasswordBody | typeof InvitationSignUp;

const DONE: FormOutcome = { kind: 'done' };
const DEAD_LINK: FormOutcome = { kind: 'dead-link' };

/** A token no link of ours carries (the API's schema bounds) cannot be live: no query needed. */
function plausibleToken(token: string): boolean {
  return token.length >= 16 && token.length <= 200;
}

export async function accountLinkIsLive(
  deps: PagesDeps,
  _caller: AuthCaller,
  input: { purpose: 'reset-password' | 'verify-email'; token: string },
): Promise<boolean> {
  return (
    plausibleToken(input.token) && (await findLiveOneTimeToken(deps.db.sequelize, input.token, input.purpose)) !== null
  );
}

export async function describeInvitation(
  deps: PagesDeps,
  _caller: AuthCaller,
  input: { token: string },
): Promise<InvitationPreview | null> {
  return plausibleToken(input.token) ? previewInvitation(deps.db.sequelize, input.token) : null;
}

/** The first rule of the API's body schema that the input breaks, as a problem the page can name. */
function firstProblem(schema: CheckedBody, body: object): FormProblem | 'token' | null {
  const error = Value.Errors(schema, body).First();
  if (!error) return null;
  const field = error.path.replace(/^\//, '');
  if (field === 'newPassword' || field === 'password') {
    return typeof error.schema.maxLength === 'number' && String(error.value).length > error.schema.maxLength
      ? 'password-too-long'
      : 'password-too-short';
  }
  if (field === 'name') return 'name-too-long';
  return 'token';
}

/** Set by the API's own rules, so `svc` and the page can never disagree about a password. */
function passwordProblem(
  schema: CheckedBody,
  body: object,
  confirmation: { password: string; repeated: string },
): FormOutcome | null {
  const problem = firstProblem(schema, body);
  if (problem === 'token') return DEAD_LINK;
  if (problem) return { kind: 'problem', problem };
  if (confirmation.password !== confirmation.repeated) return { kind: 'problem', problem: 'passwords-differ' };
  return null;
}

/** Runs the API's service; the refusals a person can act on become outcomes, anything else stays an error. */
async function outcomeOf(work: Promise<unknown>): Promise<FormOutcome> {
  try {
    await work;
    return DONE;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.code === 'INVALID_TOKEN') return DEAD_LINK;
    if (error.code === 'EMAIL_TAKEN') return { kind: 'problem', problem: 'email-taken' };
    throw error;
  }
}

export async function resetPasswordFromPage(
  deps: PagesDeps,
  caller: AuthCaller,
  input: { token: string; newPassword: string; repeatedPassword: string },
): Promise<FormOutcome> {
  const body = { token: input.token, newPassword: input.newPassword };
  const invalid = passwordProblem(ResetPasswordBody, body, {
    password: input.newPassword,
    repeated: input.repeatedPassword,
  });
  if (invalid) return invalid;
  return outcomeOf(resetPassword(deps, caller, body));
}

export async function verifyEmailFromPage(
  deps: PagesDeps,
  caller: AuthCaller,
  input: { token: string },
): Promise<FormOutcome> {
  if (!plausibleToken(input.token)) return DEAD_LINK;
  return outcomeOf(verifyEmail(deps, caller, input));
}

/** Signs up the invited address (never one typed in the form) and joins the tenant with its role. */
export async function acceptInvitationFromPage(
  deps: PagesDeps,
  caller: AuthCaller,
  input: { token: string; name: string; password: string; repeatedPassword: string },
): Promise<FormOutcome> {
  const invitation = await describeInvitation(deps, caller, { token: input.token });
  if (!invitation) return DEAD_LINK;
  const typed = { password: input.password, ...(input.name.trim() ? { name: input.name.trim() } : {}) };
  const invalid = passwordProblem(InvitationSignUp, typed, {
    password: input.password,
    repeated: input.repeatedPassword,
  });
  if (invalid) return invalid;
  return outcomeOf(registerAdmin(deps, caller, { ...typed, email: invitation.email, invitationToken: input.token }));
}

/**
 * A dead link's form: a new reset or verification link for the address, by the API's own services
 * (silent when the address has no such account).
 */
export async function mailNewLink(
  deps: PagesDeps,
  caller: AuthCaller,
  input: { purpose: 'reset-password' | 'verify-email'; email: string },
): Promise<void> {
  if (input.email.length > 320 || !input.email.includes('@')) return;
  const request = input.purpose === 'reset-password' ? requestPasswordReset : requestEmailVerification;
  await request(deps, caller, { email: input.email });
}
