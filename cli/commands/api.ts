import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../base-command.ts';
import { MissingInputError } from '../errors.ts';
import { table } from '../format.ts';
import {
  callOperation,
  fetchOperations,
  findOperation,
  parsePairs,
  readJsonBody,
  type ApiOperation,
} from '../services/api-operations.ts';

export default class Api extends SvcCommand<typeof Api> {
  static override summary = "Call any operation of the daemon by its operationId (from the daemon's /openapi.json).";
  static override description =
    'For the endpoints without a command of their own. Path and query parameters are --param name=value ' +
    '(repeat a name for a list); {tenantId} defaults to the current tenant. The answer is printed as JSON. ' +
    'Credentials, tenant, exit codes and errors are those of every other command.';
  static override examples = [
    '<%= config.bin %> api --list',
    '<%= config.bin %> api getTemplatesTags',
    '<%= config.bin %> api postEmailsLogsByIdResend --param id=0b6c…',
    '<%= config.bin %> api postEmailsBatch --body @batch.json',
    'echo \'{"name":"partners"}\' | <%= config.bin %> api postContactTags --body -',
  ];
  static override showHeader = false;
  static override args = { operationId: Args.string({ description: 'operationId (see --list)' }) };
  static override flags = {
    list: Flags.boolean({ description: 'list the operations of the daemon' }),
    param: Flags.string({ char: 'p', multiple: true, description: 'a path or query parameter, name=value' }),
    body: Flags.string({ char: 'b', description: 'JSON request body: inline, @file.json, or - for stdin' }),
  };

  async run(): Promise<unknown> {
    const operations = await fetchOperations(this.client);
    if (this.flags.list || !this.args.operationId) {
      if (!this.flags.list) throw new MissingInputError('Name an operation (`svc api <operationId>`), or pass --list');
      this.log(table(operations, LIST_COLUMNS));
      return operations;
    }
    const operation = findOperation(operations, this.args.operationId);
    const body = this.flags.body === undefined ? undefined : await readJsonBody(this.flags.body);
    const answer = await callOperation(this.client, operation, { params: parsePairs(this.flags.param ?? []), body });
    if (answer !== undefined) this.log(typeof answer === 'string' ? answer : JSON.stringify(answer, null, 2));
    return answer ?? { ok: true };
  }
}

const LIST_COLUMNS = [
  { header: 'OPERATION', value: (o: ApiOperation) => o.operationId },
  { header: 'METHOD', value: (o: ApiOperation) => o.method },
  { header: 'PATH', value: (o: ApiOperation) => o.path },
  { header: 'SUMMARY', value: (o: ApiOperation) => o.summary },
];
