// Reply addresses (issue 52 §3, docs/inbound.md "Reply addresses"): a tenant setting, off by default,
// beside its token address on the platform inbound domain. When on, each send without a Reply-To of its
// own carries `reply+<log id>.<tag>@<platform inbound domain>`, and a reply to it is linked to the send.
// On inbound_addresses so that turning it on or off fires that table's NOTIFY (migration 0470), which
// the RCPT TO caches already LISTEN to.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE inbound_addresses ADD COLUMN reply_addresses boolean NOT NULL DEFAULT false`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE inbound_addresses DROP COLUMN IF EXISTS reply_addresses`);
};
