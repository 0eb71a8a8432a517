// Large values (message bodies, the spool's signed messages, captured messages) are compressed with
// lz4 instead of pglz where this PostgreSQL has it (daemon/db/toast-compression.ts: ~7× less of the
// database's CPU per message). Partitions made later inherit it from their table.
import type { Migration } from '../daemon/db/migrate.ts';
import { setLargeValueCompression } from '../daemon/db/toast-compression.ts';

export const up: Migration = async ({ context }) => {
  await setLargeValueCompression(context.sequelize, 'lz4');
};

export const down: Migration = async ({ context }) => {
  await setLargeValueCompression(context.sequelize, 'pglz');
};
