// The filters `svc inbound messages` and `svc inbound tail` share (GET /inbound/messages's query).
import { Flags } from '@oclif/core';
import { INBOUND_MESSAGE_STATUSES, type InboundMessagesQuery } from '../../shared/schemas/inbound.ts';

export const inboundFilterFlags = {
  from: Flags.string({ description: 'envelope sender or From contains' }),
  to: Flags.string({ description: 'the recipient address, exactly' }),
  subject: Flags.string({ description: 'subject contains' }),
  route: Flags.string({ description: 'only messages of this route id' }),
  status: Flags.option({ options: INBOUND_MESSAGE_STATUSES, description: 'only this status' })(),
};

export function inboundFilters(flags: {
  from?: string;
  to?: string;
  subject?: string;
  route?: string;
  status?: InboundMessagesQuery['status'];
}): InboundMessagesQuery {
  return { from: flags.from, to: flags.to, subject: flags.subject, routeId: flags.route, status: flags.status };
}
