import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { keyValue, shortDate } from '../../format.ts';
import { getTokenAddress, rotateTokenAddress } from '../../services/inbound-routing.ts';
import type { InboundTokenAddress } from '../../../shared/schemas/inbound.ts';

export default class InboundAddress extends SvcCommand<typeof InboundAddress> {
  static override operations = ['getInboundAddress', 'postInboundAddressRotate'];
  static override summary = "The tenant's own receiving address on the platform's inbound domain.";
  static override description =
    'Mail to <token>@<inbound domain> (or <token>+<tag>@…) is routed like mail to a domain of yours. ' +
    '--rotate replaces the token (the old address stops receiving) and moves its routes to the new one.';
  static override examples = [
    '<%= config.bin %> inbound address',
    '<%= config.bin %> inbound address --json | jq -r .address',
    '<%= config.bin %> inbound address --rotate',
  ];
  static override flags = {
    rotate: Flags.boolean({ description: 'replace the token; the old address stops receiving' }),
  };

  async run(): Promise<InboundTokenAddress> {
    const answer = this.flags.rotate ? await rotateTokenAddress(this.client) : await getTokenAddress(this.client);
    this.log(
      keyValue([
        ['address', answer.address],
        ['domain', answer.domain],
        ['rotated', answer.rotatedAt ? shortDate(answer.rotatedAt) : null],
      ]),
    );
    return answer;
  }
}
