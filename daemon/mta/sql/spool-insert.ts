// The transport target's insert into the spool (table mta_spool, migration 0330; docs/mta.md): one row
// per destination domain of a signed message, its id chosen by the caller (announced to the MTA thread
// before the insert, mta/spooled-messages.ts); ON CONFLICT: a send job run again after a crash spools
// nothing twice. Each row keeps what the send's log records of the attempt, written with the log's
// first outcome (modules/emails/sql/spooled-log.ts): the log is not written here.
//
// A send thread spools each message it builds as it finishes it, a dozen at a time in flight. One
// statement each held a connection per message in flight (39 PostgreSQL backends for one send thread in
// bench:mta) and cost a round trip, a commit and a NOTIFY per message; SpoolWriter writes the messages
// that arrive while a statement is in flight together in the next one (db/group-commit.ts), their bytes
// in one parameter that each row takes its slice of.
import { declare, type Sql } from '../../db/sql.ts';
import { createGroupCommit, type GroupCommit } from '../../db/group-commit.ts';
import { SPOOL_CHANNEL, type SpoolRecipient, type SpoolStream } from './spool.ts';
import type { SpooledLog } from '../../mail/spooled-log.ts';
import { SPOOLED_LOG_COLUMNS, spooledLogArraysSql, spooledLogValues } from './spooled-log-columns.ts';

/** The spool columns an insert writes, in the order insertSpoolRowsSql's source yields them by name. */
const SPOOL_INSERT_COLUMNS = `id, tenant_id, email_id, domain, recipients, envelope_from, message, expires_at, project_id,
                           stream, ${SPOOLED_LOG_COLUMNS.join(', ')}`;

/**
 * The one INSERT of spool rows, from `source`: a query yielding SPOOL_INSERT_COLUMNS by those names
 * (recipients as jsonb, message as bytea). ON CONFLICT: a message spooled again after a crash spools
 * nothing twice. Answers the ids added. Also used inside the statement that accepts a message submitted
 * over SMTP and spools it in the same commit (modules/emails/sql/insert-logs.ts), which is why it is a
 * function: mta_spool's INSERT stays here.
 */
export function insertSpoolRowsSql(source: string): string {
  return `INSERT INTO mta_spool (${SPOOL_INSERT_COLUMNS})
    SELECT ${SPOOL_INSERT_COLUMNS} FROM (${source}) AS spool_source
    ON CONFLICT (email_id, domain) DO NOTHING
    RETURNING id`;
}

/**
 * The rows of one or more messages (one statement for a message alone and for a group): $1–$4 per row (its
 * id, its message's number from 1, domain, recipients), $5–$12 per message, $13– the spooled log's fields per message; the last, all the messages' bytes one after
 * the other, each row taking its message's slice ($9 offset, $10 length).
 */
const INSERT_SPOOL = declare(
  'mta_spool_insert',
  `
  WITH d AS (
    SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[]) AS d(id, message, domain, recipients)
  ), m AS (
    SELECT * FROM unnest($5::uuid[], $6::uuid[], $7::text[], $8::float8[], $9::int[], $10::int[], $11::uuid[],
                         $12::text[], ${spooledLogArraysSql(13)})
      WITH ORDINALITY AS m(tenant_id, email_id, envelope_from, expiry_hours, message_at, message_length, project_id,
                           stream, ${SPOOLED_LOG_COLUMNS.join(', ')}, message)
  ), spooled AS (
    ${insertSpoolRowsSql(`SELECT d.id, m.tenant_id, m.email_id, d.domain, CAST(d.recipients AS jsonb) AS recipients, m.envelope_from,
           substring($${13 + SPOOLED_LOG_COLUMNS.length}::bytea FROM m.message_at + 1 FOR m.message_length) AS message,
           now() + m.expiry_hours * interval '1 hour' AS expires_at, m.project_id, m.stream,
           ${SPOOLED_LOG_COLUMNS.map((column) => `m.${column}`).join(', ')}
      FROM d JOIN m ON m.message = d.message`)}
  )
  SELECT array(SELECT id::text FROM spooled) AS ids, pg_notify('${SPOOL_CHANNEL}', '')::text AS notified,
         -- Committed without waiting for the WAL to reach the disk (see spoolMessage).
         set_config('synchronous_commit', 'off', true) AS commit_mode`,
);

export interface SpoolInsert {
  /** The rows' ids, one per entry of byDomain in its order. */
  ids: string[];
  tenantId: string | null;
  emailId: string | null;
  /** The log's project and stream: what the MTA loop picks the IP pool by. */
  projectId?: string | null;
  stream?: SpoolStream;
  envelopeFrom: string;
  message: Buffer;
  expiryHours: number;
  /** Recipients per destination domain. */
  byDomain: Map<string, string[]>;
  /** What the send's log records of the attempt, kept in the rows; absent for mail without a log (system mail). */
  log?: SpooledLog | null;
}

/** A spool row's recipients (its jsonb column): each address pending. */
export function spoolRecipients(addresses: string[]): SpoolRecipient[] {
  return addresses.map((address) => ({ address, state: 'pending', response: null }));
}

/** How many of `input`'s rows were added (the others were spooled before). */
function addedOf(input: SpoolInsert, added: Set<string>): number {
  return input.ids.filter((id) => added.has(id)).length;
}

/**
 * Spools one signed message, one row per destination domain (each keeping what its log records of the
 * attempt), and wakes the MTA loop. Answers the rows added.
 *
 * Its commit does not wait for the WAL flush: every caller settles the attempt in a synchronous commit
 * right after (the send job's outcome deletes the job; a send in its request records its log), and
 * PostgreSQL flushes the WAL in order, so that commit makes this row durable too. A crash before it
 * loses the row but not the message: the job is still there and runs again (the MTA may have delivered
 * it meanwhile: a duplicate of what was in flight, as after any crash). Waiting for the flush here held
 * PostgreSQL's NOTIFY lock through an fsync per message, which serialised the spooling of concurrent
 * sends (bench:mta, docs/mta.md).
 */
export async function spoolMessage(sql: Sql, input: SpoolInsert): Promise<number> {
  const [added] = await spoolMessages(sql, [input]);
  return added;
}

/** Spools messages in one statement (spoolMessage's commit, once); answers the rows added per message. */
export async function spoolMessages(sql: Sql, inputs: SpoolInsert[]): Promise<number[]> {
  const rows = { ids: [] as string[], message: [] as number[], domain: [] as string[], recipients: [] as string[] };
  const logValues = inputs.map((input) => spooledLogValues(input.log ?? null));
  let offset = 0;
  const offsets: number[] = [];
  inputs.forEach((input, index) => {
    offsets.push(offset);
    offset += input.message.length;
    [...input.byDomain].forEach(([domain, addresses], row) => {
      rows.ids.push(input.ids[row]);
      rows.message.push(index + 1);
      rows.domain.push(domain);
      rows.recipients.push(JSON.stringify(spoolRecipients(addresses)));
    });
  });
  const [row] = await sql.rows<{ ids: string[] }>(INSERT_SPOOL, [
    rows.ids,
    rows.message,
    rows.domain,
    rows.recipients,
    inputs.map((input) => input.tenantId),
    inputs.map((input) => input.emailId),
    inputs.map((input) => input.envelopeFrom),
    inputs.map((input) => input.expiryHours),
    offsets,
    inputs.map((input) => input.message.length),
    inputs.map((input) => input.projectId ?? null),
    inputs.map((input) => input.stream ?? 'transactional'),
    ...SPOOLED_LOG_COLUMNS.map((_, field) => logValues.map((values) => values[field])),
    inputs.length === 1 ? inputs[0].message : Buffer.concat(inputs.map((input) => input.message)),
  ]);
  const added = new Set(row.ids);
  return inputs.map((input) => addedOf(input, added));
}

/** The most message bytes one statement carries (a larger message goes alone). */
const GROUP_BYTES = 8 * 1024 * 1024;

/**
 * Spools the messages of one thread as a group commit: a message spooled while a statement is in
 * flight goes with the next one; alone, at once. A group whose statement fails (one message's row
 * refused) is written message by message, so the others are not held back by it.
 */
export class SpoolWriter {
  private readonly group: GroupCommit<SpoolInsert, number>;

  constructor(sql: Sql) {
    this.group = createGroupCommit({
      maxSize: GROUP_BYTES,
      sizeOf: (input) => input.message.length,
      write: async (inputs) => {
        if (inputs.length === 1) return Promise.allSettled([spoolMessage(sql, inputs[0])]);
        try {
          const added = await spoolMessages(sql, inputs);
          return added.map((value) => ({ status: 'fulfilled', value }));
        } catch {
          const settled: Array<PromiseSettledResult<number>> = [];
          for (const input of inputs) settled.push(...(await Promise.allSettled([spoolMessage(sql, input)])));
          return settled;
        }
      },
    });
  }

  /** Spools one message (spoolMessage); answers the rows added. */
  spool(input: SpoolInsert): Promise<number> {
    return this.group.submit(input);
  }
}
