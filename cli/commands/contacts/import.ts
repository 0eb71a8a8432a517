import { createReadStream, statSync } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import type { ContactImportResult } from '../../../shared/schemas/contacts.ts';
import type { ProgressState } from '../../ui/Progress.tsx';

const LISTED_ERRORS = 20;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export default class ContactsImport extends SvcCommand<typeof ContactsImport> {
  static override operations = ['getContacts', 'postContactsImport'];
  static override summary = 'Import contacts from a CSV file, streamed to the daemon.';
  static override description =
    'The file is read as a stream and sent as the body of POST /contacts/import (text/csv): a file of any size, never ' +
    'held in memory. The first row names the columns; a column named like a contact field (email, externalId, firstName, ' +
    'lastName, locale, optIn, tags, projectId) feeds it, other columns are mapped with --map field=Column (attributes ' +
    'as attributes.<name>=Column). tags are separated by ";" or "|"; optIn takes true/false, yes/no, 1/0. Rows with ' +
    'errors are reported by line and skipped. In a terminal a progress bar follows the upload.';
  static override examples = [
    '<%= config.bin %> contacts import people.csv',
    '<%= config.bin %> contacts import export.csv --map email=E-mail --map firstName=First --map attributes.plan=Plan',
    '<%= config.bin %> contacts import people.csv --json > result.json',
  ];
  static override args = { file: Args.string({ description: 'CSV file with a header row', required: true }) };
  static override flags = {
    map: Flags.string({ description: 'field=Column (repeat the flag)', multiple: true }),
  };

  async run(): Promise<ContactImportResult> {
    const { file } = this.args;
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      throw new CliFailure(`Cannot read ${file}.`, EXIT.usage, 'FILE_NOT_READABLE');
    }
    // An access token about to expire is refreshed here: a streamed body cannot be sent twice.
    await this.client.http.request('GET', '/contacts', { query: { limit: 1 } });

    let sent = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        sent += chunk.length;
        done(null, chunk);
      },
    });
    const body = Readable.toWeb(createReadStream(file).pipe(counted)) as ReadableStream<Uint8Array>;
    const upload = this.client.importContacts(body, this.flags.map ?? []);
    const state = (): ProgressState => ({
      done: sent,
      total: size,
      label: `${mb(sent)} of ${mb(size)} sent`,
      detail: file,
    });

    let result: ContactImportResult;
    if (this.interactive && !this.jsonEnabled()) {
      const finished = { done: false };
      const updates = (async function* () {
        while (!finished.done) {
          yield state();
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })();
      const { renderProgress } = await import('../../ui/render.ts');
      const drawing = renderProgress(`Importing ${file}`, updates).catch(() => null);
      try {
        result = await upload;
      } finally {
        finished.done = true;
        await drawing;
      }
    } else {
      let reported = -1;
      const timer = setInterval(() => {
        const tenth = size > 0 ? Math.floor((sent / size) * 10) : 10;
        if (tenth > reported && !this.jsonEnabled()) this.logToStderr(`${state().label} (${tenth * 10}%)`);
        reported = tenth;
      }, 500);
      try {
        result = await upload;
      } finally {
        clearInterval(timer);
      }
      // The last figure always, however fast the upload was (the timer may not have fired yet).
      if (reported < 10 && !this.jsonEnabled()) this.logToStderr(`${state().label} (100%)`);
    }

    this.log(`${result.rows} rows: ${result.created} created, ${result.updated} updated, ${result.failed} failed.`);
    for (const error of result.errors.slice(0, LISTED_ERRORS)) this.log(`  line ${error.line}: ${error.error}`);
    const more = result.failed - Math.min(result.errors.length, LISTED_ERRORS);
    if (more > 0) this.log(`  … and ${more} more (--json lists the first ${result.errors.length}).`);
    if (result.aborted) {
      this.logToStderr(result.aborted);
      process.exitCode = EXIT.refused;
    }
    return result;
  }
}
