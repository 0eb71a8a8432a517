// What composing, rendering and delivering mail keeps between calls: the DKIM key cache, the relay
// pools, the React Email sandbox and the DMARC answers of sender domains. Never created at import:
// buildApp, the SMTP edge and each worker thread (jobs/thread.ts) create their own with
// modules/mail-resources.ts and close them here at their shutdown. The DKIM keys and the DMARC answers
// are the domains module's (they read the Domain model and ask DNS): mail/ names only what it needs of
// them, as ports.
import type { DkimSigningOptions } from './compose.ts';
import type { VerifiedDomains } from './addresses.ts';
import type { MailTransports } from './transport.ts';
import type { ReactEmailSandbox } from '../render/react-email/sandbox.ts';

/** A tenant's verified domains and their opened DKIM keys (modules/domains/signing.ts's DkimSigningCache). */
export interface DkimKeys extends VerifiedDomains {
  /** The tenant's verified domain that covers `domain` (itself or its closest verified parent), or null. */
  verifiedDomain(
    tenantId: string,
    domain: string,
  ): Promise<{ id: string; name: string; recordChecks?: { returnPath?: { status: string } } } | null>;
  /** nodemailer `dkim` options for mail from `fromDomain`, or null when no verified domain covers it. */
  dkimFor(tenantId: string, fromDomain: string): Promise<DkimSigningOptions | null>;
  /** Drops what is kept for a tenant whose domains changed. */
  forget(tenantId: string): void;
}

export type DmarcLookup =
  /** One usable v=DMARC1 record at `name`. */
  | { kind: 'found'; name: string; record: string }
  /** No DMARC record at the domain or any parent. */
  | { kind: 'missing' }
  /** Records receivers ignore: several at one name, or no valid p= policy. */
  | { kind: 'unusable'; name: string; records: string[]; reason: string }
  /** The resolver did not answer (time-out, SERVFAIL…): unknown, never a refusal. */
  | { kind: 'unknown'; name: string; reason: string };

/** The DMARC answers of sender domains, kept by TTL (modules/domains/sender-rules.ts's SenderRules). */
export interface DmarcAnswers {
  /** The DMARC record that covers `domain` (itself, else the closest parent that has one). */
  dmarc(domain: string): Promise<DmarcLookup>;
  /** Forgets what is kept for `domain` and its subdomains. */
  forget(domain: string): void;
}

export interface MailResources {
  /** Verified domains and opened DKIM keys, kept for a minute. */
  dkimSigning: DkimKeys;
  /** Relay pools and the capture transport (mail/transport.ts). */
  mailTransports: MailTransports;
  /** Single-use render workers and their warm spare (render/react-email/sandbox.ts). */
  reactEmailSandbox: ReactEmailSandbox;
  /** DMARC answers of sender domains, kept by TTL. */
  senderRules: DmarcAnswers;
}

/** Ends the pooled relay connections and the warm render worker. */
export async function closeMailResources(resources: MailResources): Promise<void> {
  resources.mailTransports.close();
  await resources.reactEmailSandbox.close();
}
