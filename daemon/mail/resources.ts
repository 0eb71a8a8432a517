// What composing, rendering and delivering mail keeps between calls: the DKIM key cache, the relay
// pools and the React Email sandbox. Never created at import: buildApp, the SMTP edge and each worker
// thread (jobs/thread.ts) create their own and close them at their shutdown.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Secrets } from '../secrets.ts';
import { SenderRules } from '../modules/domains/sender-rules.ts';
import { DkimSigningCache } from '../modules/domains/signing.ts';
import { ReactEmailSandbox } from '../render/react-email/sandbox.ts';
import { MailTransports, type TransportConfig } from './transport.ts';

export interface MailResources {
  /** Verified domains and opened DKIM keys, kept for a minute (modules/domains/signing.ts). */
  dkimSigning: DkimSigningCache;
  /** Relay pools and the capture transport (mail/transport.ts). */
  mailTransports: MailTransports;
  /** Single-use render workers and their warm spare (render/react-email/sandbox.ts). */
  reactEmailSandbox: ReactEmailSandbox;
  /** DMARC answers of sender domains, kept by TTL (modules/domains/sender-rules.ts). */
  senderRules: SenderRules;
}

/**
 * `dkimSigning` is given when the API and the SMTP edge run in one process (main.ts): they share it, so a
 * domain verified or removed through the API is known to submission at once.
 */
export function createMailResources(
  config: TransportConfig & Partial<Pick<Config, 'dnsServers'>>,
  secrets: Pick<Secrets, 'encryptionKey'>,
  dkimSigning = new DkimSigningCache(secrets),
  log?: Pick<Logger, 'warn'>,
): MailResources {
  const senderRules = new SenderRules({
    dnsServers: config.dnsServers ?? [],
    // Fail-open (sender-rules.ts): the send goes, and the operator sees why its rule was not checked.
    onLookupTrouble: (details) =>
      log?.warn(details, 'sender rules: the DMARC look-up failed, the send is not refused for it'),
  });
  return {
    dkimSigning,
    mailTransports: new MailTransports(config),
    reactEmailSandbox: new ReactEmailSandbox(),
    senderRules,
  };
}

/** Ends the pooled relay connections and the warm render worker. */
export async function closeMailResources(resources: MailResources): Promise<void> {
  resources.mailTransports.close();
  await resources.reactEmailSandbox.close();
}
