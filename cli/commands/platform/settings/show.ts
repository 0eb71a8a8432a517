import { SvcCommand } from '../../../base-command.ts';
import { describeRecord } from '../../../records.ts';
import { readSettings } from '../../../services/platform-settings.ts';
import type { PlatformSettings } from '../../../../shared/schemas/platform.ts';

export default class PlatformSettingsShow extends SvcCommand<typeof PlatformSettingsShow> {
  static override operations = ['getPlatformSettings'];
  static override summary = 'Show the platform settings (platform admins).';
  static override examples = [
    '<%= config.bin %> platform settings show',
    '<%= config.bin %> platform settings show --json',
  ];
  static override showHeader = false;

  async run(): Promise<PlatformSettings> {
    const settings = await readSettings(this.client);
    this.log(describeRecord(settings));
    return settings;
  }
}
