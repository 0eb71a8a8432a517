// The flags `svc inbound routes add` and `… edit` share, and the route body they make.
import { Flags } from '@oclif/core';
import chalk from 'chalk';
import { INBOUND_ROUTE_ACTIONS, type InboundRoute } from '../../shared/schemas/inbound.ts';
import { keyValue } from '../format.ts';

export const routeFlags = {
  match: Flags.string({
    description: 'the address to match: support@reply.acme.com, local+*@acme.com or *@reply.acme.com',
  }),
  action: Flags.option({ options: INBOUND_ROUTE_ACTIONS, description: 'what to do with a matched message' })(),
  endpoint: Flags.string({ description: 'webhook endpoint id (action webhook; `svc webhooks list`)' }),
  'forward-to': Flags.string({ description: 'address to forward to (action forward)' }),
  'refuse-message': Flags.string({ description: 'the SMTP reply text (action refuse)' }),
  position: Flags.integer({ min: 0, description: 'order among the routes: the first match wins' }),
  description: Flags.string({ description: 'a note for people' }),
  'max-inline-bytes': Flags.integer({
    min: 0,
    description: 'attachments up to this size travel inside the webhook; larger ones as signed links',
  }),
};

export interface RouteFlagValues {
  match?: string;
  action?: InboundRoute['action'];
  endpoint?: string;
  'forward-to'?: string;
  'refuse-message'?: string;
  position?: number;
  description?: string;
  'max-inline-bytes'?: number;
}

/** The body fields the flags set; absent flags leave fields out (edit changes only what is named). */
export function routeFields(flags: RouteFlagValues) {
  return {
    ...(flags.match !== undefined ? { address: flags.match } : {}),
    ...(flags.action !== undefined ? { action: flags.action } : {}),
    ...(flags.endpoint !== undefined ? { endpointId: flags.endpoint } : {}),
    ...(flags['forward-to'] !== undefined ? { forwardTo: flags['forward-to'] } : {}),
    ...(flags['refuse-message'] !== undefined ? { refuseMessage: flags['refuse-message'] } : {}),
    ...(flags.position !== undefined ? { position: flags.position } : {}),
    ...(flags.description !== undefined ? { description: flags.description } : {}),
    ...(flags['max-inline-bytes'] !== undefined ? { maxInlineAttachmentBytes: flags['max-inline-bytes'] } : {}),
  };
}

export function routeTarget(route: InboundRoute): string {
  if (route.action === 'webhook') return `webhook ${route.endpointId ?? '?'}`;
  if (route.action === 'forward') return `forward → ${route.forwardTo ?? '?'}`;
  if (route.action === 'refuse') return `refuse${route.refuseMessage ? ` "${route.refuseMessage}"` : ''}`;
  return 'store';
}

export function describeRoute(route: InboundRoute): string {
  return keyValue([
    ['id', route.id],
    ['match', route.address],
    ['action', routeTarget(route)],
    ['position', String(route.position)],
    ['enabled', route.enabled ? chalk.green('yes') : chalk.red('no')],
    ['inline ≤', `${route.maxInlineAttachmentBytes} bytes`],
    ['note', route.description],
  ]);
}
