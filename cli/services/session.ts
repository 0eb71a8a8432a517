// Signing in and out: the two-step login with 2FA, storing the token pair, choosing a first tenant.
import { resolve } from 'node:path';
import type { SvcClient } from '../client.ts';
import type { TokenPair } from '../../shared/schemas/auth.ts';
import { CliFailure, EXIT } from '../errors.ts';
import type { CredentialsOutcome } from '../ui/LoginForm.tsx';

export interface SignedIn {
  email: string;
  profile: string;
  baseUrl: string;
  tenant: { id: string; name: string } | null;
}

export class SignInFlow {
  private challengeToken: string | null = null;
  private email = '';

  constructor(private readonly client: SvcClient) {}

  async submitCredentials(email: string, password: string): Promise<CredentialsOutcome> {
    this.email = email;
    const answer = await this.client.login(email, password);
    if ('twoFactorRequired' in answer) {
      this.challengeToken = answer.challengeToken;
      return 'needs-code';
    }
    this.keep(email, answer);
    return 'signed-in';
  }

  async submitCode(code: string): Promise<void> {
    if (!this.challengeToken) throw new CliFailure('Send the e-mail and password first.', EXIT.usage);
    this.keep(this.email, await this.client.verifyLogin(this.challengeToken, code));
  }

  private keep(email: string, tokens: TokenPair): void {
    const http = this.client.http;
    http.storeTokens(tokens, {
      email,
      ...(http.baseUrlOverride ? { baseUrl: http.baseUrlOverride } : {}),
      // Kept so later commands trust the same CA without --ca.
      ...(http.caFile ? { caFile: resolve(http.caFile) } : {}),
    });
  }
}

/**
 * After signing in: keep the profile's tenant if the admin still belongs to it, otherwise pick the
 * only tenant there is. With several and none chosen, `svc tenants use` decides.
 */
export async function settleTenant(client: SvcClient): Promise<SignedIn['tenant']> {
  const me = await client.me();
  const http = client.http;
  const current = me.tenants.find((tenant) => tenant.id === http.profile.tenantId);
  const chosen = current ?? (me.tenants.length === 1 ? me.tenants[0] : undefined);
  http.saveProfile({ tenantId: chosen?.id, tenantName: chosen?.name });
  return chosen ? { id: chosen.id, name: chosen.name } : null;
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
