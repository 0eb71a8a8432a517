import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { readJsonBody } from '../../services/api-operations.ts';
import { contacts } from '../../services/contacts.ts';
import type { BulkUpsertContactsResult } from '../../../shared/schemas/contacts.ts';

export default class ContactsBulk extends SvcCommand<typeof ContactsBulk> {
  static override operations = ['postContactsBulk'];
  static override summary = 'Upsert up to 1000 contacts from a JSON array (each row succeeds or fails on its own).';
  static override description = 'For a CSV file of any size, use `svc contacts import`. Exit 1 when a row failed.';
  static override examples = [
    '<%= config.bin %> contacts bulk contacts.json',
    'jq -c .people export.json | <%= config.bin %> contacts bulk - --json',
  ];
  static override args = {
    file: Args.string({ description: 'JSON file (an array of contacts, or {"contacts":[…]}), or -', required: true }),
  };

  async run(): Promise<BulkUpsertContactsResult> {
    const parsed = await readJsonBody(this.args.file === '-' ? '-' : `@${this.args.file}`);
    const rows = Array.isArray(parsed) ? parsed : (parsed as { contacts?: unknown }).contacts;
    if (!Array.isArray(rows)) throw new CliFailure('The file holds no array of contacts.', EXIT.usage, 'BAD_FLAG');
    const result = await contacts.bulk(this.client, rows);
    this.log(`${result.created} created, ${result.updated} updated, ${result.failed} failed.`);
    for (const row of result.results.filter((r) => r.status === 'error'))
      this.log(`  row ${row.index}: ${JSON.stringify(row)}`);
    if (result.failed > 0) process.exitCode = EXIT.refused;
    return result;
  }
}
