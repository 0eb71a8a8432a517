// How long each credential handed to a client lives: one place for the auth plugin (which signs
// access tokens) and the auth services (which issue the rest) to read.
import type { AuthTokenPurpose } from './model.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;
export const ONE_TIME_TOKEN_TTL_MS: Record<AuthTokenPurpose, number> = {
  'reset-password': 3600 * 1000,
  'verify-email': 48 * 3600 * 1000,
  'login-challenge': 5 * 60 * 1000,
};
