// The GIN search indexes of the history partitions lose their pending list (fastupdate = off): with
// it, logs written through the API left up to 4 MB of unsorted keys that every recipient or tag
// search read whole (daemon/db/partitions.ts, turnOffGinPendingLists). The flush of a full list takes
// a second or two per partition; the setting itself is a catalogue change.
import { QueryTypes } from 'sequelize';
import type { Migration } from '../daemon/db/migrate.ts';
import { turnOffGinPendingLists } from '../daemon/db/partitions.ts';

export const up: Migration = async ({ context }) => {
  await turnOffGinPendingLists(context.sequelize);
};

export const down: Migration = async ({ context }) => {
  const indexes = await context.sequelize.query<{ name: string }>(
    `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS name FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'i' AND c.reloptions @> ARRAY['fastupdate=off']`,
    { type: QueryTypes.SELECT },
  );
  for (const { name } of indexes) await context.sequelize.query(`ALTER INDEX ${name} RESET (fastupdate)`);
};
