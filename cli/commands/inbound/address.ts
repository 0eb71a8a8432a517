import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { keyValue, shortDate } from '../../format.ts';
import { getTokenAddress, rotateTokenAddress, updateTokenAddress } from '../../services/inbound-routing.ts';
import type { InboundTokenAddress } from '../../../shared/schemas/inbound.ts';

export default class InboundAddress extends SvcCommand<typeof InboundAddress> {
  static override operations = ['getInboundAddress', 'postInboundAddressRotate', 'patchInboundAddress'];
  static override summary = "The tenant's own receiving address on the platform's inbound domain.";
  static override description =
    'Mail to <token>@<inbound domain> (or <token>+<tag>@…) is routed like mail to a domain of yours. ' +
    '--rotate replaces the token (the old address stops receiving) and moves its routes to the new one. ' +
    '--reply-addresses on makes each send without a Reply-To of its own carry reply+<log id>.<tag>@<inbound domain>: ' +
    'a reply to it is linked to the send (email.replied) and received as this address (off by default).';
  static override examples = [
    '<%= config.bin %> inbound address',
    '<%= config.bin %> inbound address --json | jq -r .address',
    '<%= config.bin %> inbound address --rotate',
    '<%= config.bin %> inbound address --reply-addresses on',
  ];
  static override flags = {
    rotate: Flags.boolean({ description: 'replace the token; the old address stops receiving' }),
    'reply-addresses': Flags.option({
      options: ['on', 'off'] as const,
      description: 'sends without their own Reply-To carry a reply address linking replies to them',
    })(),
  };

  async run(): Promise<InboundTokenAddress> {
    const replies = this.flags['reply-addresses'];
    if (replies) await updateTokenAddress(this.client, { replyAddresses: replies === 'on' });
    const answer = this.flags.rotate ? await rotateTokenAddress(this.client) : await getTokenAddress(this.client);
    this.log(
      keyValue([
        ['address', answer.address],
        ['domain', answer.domain],
        ['rotated', answer.rotatedAt ? shortDate(answer.rotatedAt) : null],
        ['reply addresses', answer.replyAddresses ? `on (reply+…@${answer.domain})` : 'off'],
      ]),
    );
    return answer;
  }
}
