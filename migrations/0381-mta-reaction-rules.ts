// Reactions to providers' replies (issue 29): a reply that matches a rule suspends the provider (or the
// one destination) for a while, lowers its rate by a factor for a while, or pauses the tenant whose
// message drew it. Seeded with the replies the big providers document:
// - Gmail `421 4.7.28` "unusual rate of unsolicited mail … rate limited": stop sending to Google for 15 min;
// - Yahoo `421 4.7.0 [TSS04]` "temporarily deferred due to unexpected volume or user complaints":
//   half the rate (and connections) for 30 min;
// - Microsoft `550 5.7.515` "sending domain does not meet the required authentication level": the
//   sender's SPF/DKIM/DMARC is wrong, every message will be refused until the tenant fixes it: pause;
// - Microsoft `4.7.650`/`4.7.500` "temporarily rate limited due to IP reputation": half the rate for an hour;
// - any `421 … try again later`: that destination alone waits 5 min.
// Every non-null match field must match (text_pattern: a case-insensitive JavaScript regular expression);
// provider_key null matches any provider. Lower priority first; the first rule that matches acts.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE mta_reaction_rules (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      priority int NOT NULL DEFAULT 100,
      provider_key text,
      reply_code int CHECK (reply_code BETWEEN 400 AND 599),
      enhanced_code text CHECK (enhanced_code ~ '^[245]\\.[0-9]{1,3}\\.[0-9]{1,3}$'),
      text_pattern text,
      action text NOT NULL CHECK (action IN ('suspend', 'slow', 'pause_tenant')),
      scope text NOT NULL DEFAULT 'provider' CHECK (scope IN ('provider', 'destination')),
      minutes int CHECK (minutes BETWEEN 1 AND 10080),
      factor real CHECK (factor > 0 AND factor < 1),
      description text NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (reply_code IS NOT NULL OR enhanced_code IS NOT NULL OR text_pattern IS NOT NULL),
      CHECK (action = 'pause_tenant' OR minutes IS NOT NULL),
      CHECK ((action = 'slow') = (factor IS NOT NULL))
    );
    INSERT INTO mta_reaction_rules (priority, provider_key, reply_code, enhanced_code, text_pattern, action, scope, minutes, factor, description) VALUES
      (10, 'google', NULL, '4.7.28', NULL, 'suspend', 'provider', 15, NULL, 'Gmail rate limit (unusual rate of unsolicited mail)'),
      (10, 'yahoo', NULL, NULL, '\\bTSS04\\b', 'slow', 'provider', 30, 0.5, 'Yahoo TSS04: deferred for unexpected volume or complaints'),
      (10, 'microsoft', NULL, '5.7.515', NULL, 'pause_tenant', 'provider', NULL, NULL, 'Microsoft: sender authentication (SPF, DKIM, DMARC) below requirements'),
      (20, 'microsoft', NULL, '4.7.650', NULL, 'slow', 'provider', 60, 0.5, 'Microsoft: rate limited for IP reputation'),
      (20, 'microsoft', NULL, '4.7.500', NULL, 'slow', 'provider', 60, 0.5, 'Microsoft: server busy, rate limited'),
      (90, NULL, 421, NULL, 'try (again )?later', 'suspend', 'destination', 5, NULL, '421 try again later');`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS mta_reaction_rules;`);
};
