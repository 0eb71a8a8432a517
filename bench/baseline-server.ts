// The baselines of the accept-rate measurement, run as a child process like the daemon:
//   db    — a bare Fastify route doing one pg INSERT of the send into bench_sends (shaped like email_logs)
//   none  — the same route answering without touching a database
//   contacts — bench:lists' baseline: POST /contacts/bulk doing one multi-row pg INSERT of the request's
//           contacts (up to 1,000) into bench_contacts (shaped like contacts: same columns, defaults, indexes)
// Usage: node --import tsx bench/baseline-server.ts <db|none|contacts> <port>   (DATABASE_URL for db, contacts)
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const mode = process.argv[2];
const port = Number(process.argv[3]);
if (!['db', 'none', 'contacts'].includes(mode) || !Number.isInteger(port)) {
  console.error('usage: baseline-server.ts <db|none|contacts> <port>');
  process.exit(2);
}

interface SendBody {
  from: string;
  to: string;
  subject: string;
  htmlBody: string;
  textBody: string;
  tags: string[];
}

// The daemon's API side opens a pool of 20 connections; the baseline gets the same.
const pool = mode !== 'none' ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 }) : null;
const app = Fastify({ logger: false });

app.post<{ Body: SendBody }>('/emails/send', async (request, reply) => {
  const body = request.body;
  const id = randomUUID();
  const messageId = `<${id}@bench.example>`;
  if (pool) {
    await pool.query(
      `INSERT INTO bench_sends (id, tenant_id, message_id, from_address, to_addresses, subject, html_body, text_body, tags)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        id,
        '00000000-0000-0000-0000-000000000000',
        messageId,
        body.from,
        [body.to],
        body.subject,
        body.htmlBody,
        body.textBody,
        body.tags,
      ],
    );
  }
  return reply.code(202).send({ id, status: 'QUEUED', messageId });
});

interface ContactsBody {
  contacts: { email: string; firstName?: string; optIn?: boolean; attributes?: Record<string, unknown> }[];
}

app.post<{ Body: ContactsBody }>('/contacts/bulk', { bodyLimit: 1024 * 1024 }, async (request) => {
  const { contacts } = request.body;
  const values: unknown[] = [];
  const rows = contacts.map((c, i) => {
    values.push(c.email, c.firstName ?? null, c.optIn ?? false, JSON.stringify(c.attributes ?? {}));
    return `('00000000-0000-0000-0000-000000000000', $${i * 4 + 1}, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4}::jsonb)`;
  });
  const result = await pool!.query(
    `INSERT INTO bench_contacts (tenant_id, email, first_name, opt_in, attributes) VALUES ${rows.join(', ')} RETURNING id`,
    values,
  );
  return { created: result.rowCount, failed: 0 };
});

await app.listen({ port, host: '127.0.0.1' });
console.log(`ready ${port}`);
const stop = async () => {
  await app.close();
  await pool?.end();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
