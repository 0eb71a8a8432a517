// Creates the mail resources (mail/resources.ts) of an app, the SMTP edge or a worker thread, with the
// domains module's DKIM key cache and DMARC answers in them: wiring above mail/, so that mail/ knows the
// two only as ports. Called by app.ts, smtp/edge.ts and jobs/thread.ts.
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { Config } from '../config.ts';
import type { Secrets } from '../secrets.ts';
import type { DkimKeys, MailResources } from '../mail/resources.ts';
import { MailTransports, type TransportConfig } from '../mail/transport.ts';
import { ReactEmailSandbox } from '../render/react-email/sandbox.ts';
import { MtaSpooler } from '../mta/spooler.ts';
import { SenderRules } from './domains/sender-rules.ts';
import { DkimSigningCache } from './domains/signing.ts';

/**
 * `dkimSigning` is given when the API and the SMTP edge run in one process (main.ts): they share it, so a
 * domain verified or removed through the API is known to submission at once.
 */
export function createMailResources(
  config: TransportConfig & Partial<Pick<Config, 'dnsServers'>>,
  secrets: Pick<Secrets, 'encryptionKey'>,
  /** The connection the DKIM key cache reads the verified domains on. */
  sequelize: Sequelize,
  dkimSigning: DkimKeys = new DkimSigningCache(secrets, sequelize),
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
    // Direct delivery's spool, handed to mail/ as a port (mail/transport.ts's SpoolPort).
    mailTransports: new MailTransports(config, new MtaSpooler(config.deliveryExpiryHours)),
    reactEmailSandbox: new ReactEmailSandbox(),
    senderRules,
  };
}
