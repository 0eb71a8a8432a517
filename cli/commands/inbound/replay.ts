import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { keyValue } from '../../format.ts';
import { replayMessage } from '../../services/inbound-routing.ts';
import type { InboundReplayAnswer } from '../../../shared/schemas/inbound.ts';

export default class InboundReplay extends SvcCommand<typeof InboundReplay> {
  static override operations = ['postInboundMessagesByIdReplay'];
  static override summary = "Deliver a stored message again through its route's action (after fixing an endpoint).";
  static override examples = [
    '<%= config.bin %> inbound replay 5d3a…',
    '<%= config.bin %> inbound replay 5d3a… --json',
  ];
  static override args = { id: Args.string({ description: 'inbound message id', required: true }) };

  async run(): Promise<InboundReplayAnswer> {
    const answer = await replayMessage(this.client, this.args.id);
    this.log(
      keyValue([
        ['id', answer.id],
        ['status', answer.status],
        ['event', answer.eventId],
      ]),
    );
    return answer;
  }
}
