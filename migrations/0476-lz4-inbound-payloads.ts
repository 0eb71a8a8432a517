// The webhook bodies (inbound.received carries the message's text, HTML and small attachments inline)
// and the parsed form of inbound messages are compressed with lz4 instead of pglz where this
// PostgreSQL has it (daemon/db/toast-compression.ts INBOUND_LARGE_VALUE_COLUMNS; issue 52 §5).
// Partitions made later inherit it from their table; values already stored keep pglz.
import type { Migration } from '../daemon/db/migrate.ts';
import { INBOUND_LARGE_VALUE_COLUMNS, setLargeValueCompression } from '../daemon/db/toast-compression.ts';

export const up: Migration = async ({ context }) => {
  await setLargeValueCompression(context.sequelize, 'lz4', INBOUND_LARGE_VALUE_COLUMNS);
};

export const down: Migration = async ({ context }) => {
  await setLargeValueCompression(context.sequelize, 'pglz', INBOUND_LARGE_VALUE_COLUMNS);
};
