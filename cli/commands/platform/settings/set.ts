import { Flags } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { CliFailure, EXIT } from '../../../errors.ts';
import { describeRecord } from '../../../records.ts';
import { readJsonBody } from '../../../services/api-operations.ts';
import { changeSettings, settingsFromPairs } from '../../../services/platform-settings.ts';
import type { PlatformSettings } from '../../../../shared/schemas/platform.ts';

export default class PlatformSettingsSet extends SvcCommand<typeof PlatformSettingsSet> {
  static override operations = ['patchPlatformSettings'];
  static override summary =
    'Change platform settings: key=value pairs, typed by the settings schema (platform admins).';
  static override description =
    'Booleans take true/false, numbers a number, nullable settings "null" (back to the default), lists and ' +
    'objects JSON. --json-body takes the whole PATCH body instead. Prints the whole set as it is now.';
  static override examples = [
    '<%= config.bin %> platform settings set defaultFromAddress=no-reply@mail.example.com',
    '<%= config.bin %> platform settings set registrationOpen=false logRetentionDays=30',
    '<%= config.bin %> platform settings set --json-body \'{"returnPathDomain":null}\'',
  ];
  static override strict = false;
  static override showHeader = false;
  static override flags = {
    'json-body': Flags.string({ description: 'the PATCH body as JSON, @file.json, or - for stdin' }),
  };

  async run(): Promise<PlatformSettings> {
    const pairs = this.positionals;
    const jsonBody = this.flags['json-body'];
    if (pairs.length === 0 && jsonBody === undefined)
      throw new CliFailure('Pass key=value pairs, or --json-body.', EXIT.usage, 'MISSING_FLAG');
    const changes = jsonBody === undefined ? settingsFromPairs(pairs) : await readJsonBody(jsonBody);
    const settings = await changeSettings(this.client, changes as Record<string, unknown>);
    this.log(describeRecord(settings));
    return settings;
  }
}
