// Inbound routes and the tenant's inbound address (issue 52, docs/inbound.md): the rules, no HTTP.
// A route's address must be at a domain the tenant receives on: one of its inbound domains (pending
// ones too, so routes can be set up before the MX is), or the platform inbound domain at the tenant's
// own token (`<token>@`, `<token>+*@`, `*@`, which there means "any tag of my token"). Messages, replay
// and domains are in messages.ts and domains.ts.
import { randomBytes } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import type { TenantContext } from '../../context.ts';
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../../errors.ts';
import { platformInboundDomain, systemMailDomain } from '../../mail/addresses.ts';
import { BASE32_ALPHABET } from '../../mail/base32.ts';
import { pageOf, pageWindow } from '../../db/paging.ts';
import type { PageQuery } from '../../../shared/schemas/common.ts';
import {
  DEFAULT_INLINE_ATTACHMENT_BYTES,
  MAX_INBOUND_ROUTES,
  type CreateInboundRouteBody,
  type InboundRoute,
  type InboundRoutesPage,
  type InboundTokenAddress,
  type UpdateInboundAddressBody,
  type UpdateInboundRouteBody,
} from '../../../shared/schemas/inbound.ts';
import { normaliseMatchAddress, splitAddress } from './matching.ts';
import {
  ensureAddressRow,
  lockAddressRow,
  setReplyAddresses,
  setToken,
  type InboundAddressRow,
} from './sql/addresses.ts';
import { domainByName } from './sql/domains.ts';
import {
  countRoutes,
  deleteRoute as deleteRouteRow,
  endpointOfTenant,
  insertRoute,
  listRouteRows,
  renameTokenRoutes,
  routeRow,
  updateRoute as updateRouteRow,
  type InboundRouteRow,
  type RouteFields,
} from './sql/routes.ts';

export interface InboundServiceDeps {
  db: { sequelize: Sequelize };
  config: Pick<Config, 'publicUrl' | 'inboundDomain' | 'inboundMxHost'>;
}

/** The host a tenant's inbound domain must name in its MX: INBOUND_MX_HOST, else the mail domain. */
export function inboundMxHost(config: Pick<Config, 'publicUrl' | 'inboundMxHost'>): string {
  return config.inboundMxHost ?? systemMailDomain(config);
}

const iso = (date: Date | string) => new Date(date).toISOString();

export function toRouteDto(row: InboundRouteRow): InboundRoute {
  return {
    id: row.id,
    position: row.position,
    address: row.match_address,
    action: row.action,
    endpointId: row.endpoint_id,
    forwardTo: row.forward_to,
    refuseMessage: row.refuse_message,
    enabled: row.enabled,
    description: row.description,
    maxInlineAttachmentBytes: row.max_inline_attachment_bytes,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** 16 characters of base32 (80 random bits): a token address nobody guesses. */
export function newInboundToken(): string {
  return Array.from(randomBytes(16), (byte) => BASE32_ALPHABET[byte & 31]).join('');
}

async function addressRow(deps: InboundServiceDeps, tenantId: string): Promise<InboundAddressRow> {
  return ensureAddressRow(deps.db.sequelize, tenantId, newInboundToken());
}

function toAddressDto(deps: InboundServiceDeps, row: InboundAddressRow): InboundTokenAddress {
  const domain = platformInboundDomain(deps.config);
  return {
    address: `${row.token}@${domain}`,
    domain,
    rotatedAt: row.rotated_at ? iso(row.rotated_at) : null,
    replyAddresses: row.reply_addresses,
  };
}

export async function getInboundAddress(deps: InboundServiceDeps, ctx: TenantContext): Promise<InboundTokenAddress> {
  return toAddressDto(deps, await addressRow(deps, ctx.tenantId));
}

/**
 * Reply addresses on or off (docs/inbound.md "Reply addresses"). The RCPT TO caches hear of it at once
 * (the table's NOTIFY); sends composed from then on carry the address, or stop carrying it, within the
 * minute the send path keeps the setting (emails/send-context.ts).
 */
export async function updateInboundAddress(
  deps: InboundServiceDeps,
  ctx: TenantContext,
  body: UpdateInboundAddressBody,
): Promise<InboundTokenAddress> {
  await addressRow(deps, ctx.tenantId);
  const row = await setReplyAddresses(deps.db.sequelize, ctx.tenantId, body.replyAddresses);
  if (!row) throw new NotFoundError('The inbound address');
  return toAddressDto(deps, row);
}

/** A new token; the routes of the old token address move to the new one, in one transaction. */
export async function rotateInboundAddress(deps: InboundServiceDeps, ctx: TenantContext): Promise<InboundTokenAddress> {
  await addressRow(deps, ctx.tenantId);
  const { sequelize } = deps.db;
  const row = await sequelize.transaction(async (transaction) => {
    const old = await lockAddressRow(sequelize, ctx.tenantId, transaction);
    if (!old) throw new NotFoundError('The inbound address');
    const token = newInboundToken();
    await renameTokenRoutes(
      sequelize,
      ctx.tenantId,
      { oldLocal: old.token, newLocal: token, domain: platformInboundDomain(deps.config) },
      transaction,
    );
    return setToken(sequelize, ctx.tenantId, token, transaction);
  });
  return toAddressDto(deps, row);
}

/** Why the tenant may not route `address`, or null. */
async function addressRefusal(deps: InboundServiceDeps, tenantId: string, address: string): Promise<string | null> {
  const parts = splitAddress(address);
  if (!parts) return 'is not an address';
  const platform = platformInboundDomain(deps.config);
  if (parts.domain === platform) {
    const { token } = await addressRow(deps, tenantId);
    const local = parts.local.toLowerCase();
    if (local === token || local === `${token}+*` || local === '*') return null;
    return `is on the platform inbound domain ${platform}, where this tenant receives only at its token address ${token}@${platform} (GET /inbound/address): use ${token}@, ${token}+*@ or *@`;
  }
  if (await domainByName(deps.db.sequelize, tenantId, parts.domain)) return null;
  return `is at ${parts.domain}, which is not an inbound domain of this tenant: add it with POST /inbound/domains (its MX must name ${inboundMxHost(deps.config)})`;
}

/** The action's own fields checked, the others cleared (a store route keeps no stale endpoint). */
async function checkedFields(deps: InboundServiceDeps, tenantId: string, fields: RouteFields): Promise<RouteFields> {
  const detail = (field: string, message: string) => new ValidationError(`${field} ${message}.`, [{ field, message }]);
  const refusal = await addressRefusal(deps, tenantId, fields.match_address);
  if (refusal)
    throw new UnprocessableError(`The address ${fields.match_address} ${refusal}.`, 'INBOUND_ADDRESS_NOT_OURS');
  const cleared = { ...fields, endpoint_id: null, forward_to: null, refuse_message: null };
  switch (fields.action) {
    case 'webhook':
      if (!fields.endpoint_id) throw detail('body.endpointId', 'is required for a webhook route');
      if (!(await endpointOfTenant(deps.db.sequelize, tenantId, fields.endpoint_id)))
        throw new UnprocessableError(`No webhook endpoint ${fields.endpoint_id} in this tenant.`, 'ENDPOINT_NOT_FOUND');
      return { ...cleared, endpoint_id: fields.endpoint_id };
    case 'forward':
      if (!fields.forward_to) throw detail('body.forwardTo', 'is required for a forward route');
      return { ...cleared, forward_to: fields.forward_to };
    case 'refuse':
      return { ...cleared, refuse_message: fields.refuse_message };
    case 'store':
      return cleared;
  }
}

export async function listRoutes(
  deps: InboundServiceDeps,
  ctx: TenantContext,
  query: PageQuery,
): Promise<InboundRoutesPage> {
  // InboundRoutesQuery's default limit is 100 (a tenant's whole rule list), not the usual 20.
  const window = pageWindow({ page: query.page, limit: query.limit ?? 100 });
  const { rows, total } = await listRouteRows(deps.db.sequelize, ctx.tenantId, window);
  return pageOf(rows.map(toRouteDto), window, total);
}

export async function getRoute(deps: InboundServiceDeps, ctx: TenantContext, id: string): Promise<InboundRoute> {
  const row = await routeRow(deps.db.sequelize, ctx.tenantId, id);
  if (!row) throw new NotFoundError('Inbound route');
  return toRouteDto(row);
}

export async function createRoute(
  deps: InboundServiceDeps,
  ctx: TenantContext,
  body: CreateInboundRouteBody,
): Promise<InboundRoute> {
  if ((await countRoutes(deps.db.sequelize, ctx.tenantId)) >= MAX_INBOUND_ROUTES)
    throw new ConflictError(`A tenant has at most ${MAX_INBOUND_ROUTES} inbound routes.`, 'TOO_MANY_ROUTES');
  const fields = await checkedFields(deps, ctx.tenantId, {
    match_address: normaliseMatchAddress(body.address),
    action: body.action,
    endpoint_id: body.endpointId ?? null,
    forward_to: body.forwardTo ?? null,
    refuse_message: body.refuseMessage ?? null,
    enabled: body.enabled ?? true,
    description: body.description ?? null,
    max_inline_attachment_bytes: body.maxInlineAttachmentBytes ?? DEFAULT_INLINE_ATTACHMENT_BYTES,
    position: body.position ?? null,
  });
  return toRouteDto(await insertRoute(deps.db.sequelize, ctx.tenantId, fields));
}

export async function updateRoute(
  deps: InboundServiceDeps,
  ctx: TenantContext,
  input: { id: string; body: UpdateInboundRouteBody },
): Promise<InboundRoute> {
  const { id, body } = input;
  const current = await routeRow(deps.db.sequelize, ctx.tenantId, id);
  if (!current) throw new NotFoundError('Inbound route');
  const pick = <T>(value: T | undefined, fallback: T): T => (value === undefined ? fallback : value);
  const fields = await checkedFields(deps, ctx.tenantId, {
    match_address: body.address === undefined ? current.match_address : normaliseMatchAddress(body.address),
    action: pick(body.action, current.action),
    endpoint_id: pick(body.endpointId, current.endpoint_id),
    forward_to: pick(body.forwardTo, current.forward_to),
    refuse_message: pick(body.refuseMessage, current.refuse_message),
    enabled: pick(body.enabled, current.enabled),
    description: pick(body.description, current.description),
    max_inline_attachment_bytes: pick(body.maxInlineAttachmentBytes, current.max_inline_attachment_bytes),
    position: pick(body.position, current.position),
  });
  const row = await updateRouteRow(deps.db.sequelize, ctx.tenantId, id, {
    ...fields,
    position: fields.position ?? current.position,
  });
  if (!row) throw new NotFoundError('Inbound route');
  return toRouteDto(row);
}

export async function deleteRoute(deps: InboundServiceDeps, ctx: TenantContext, id: string): Promise<void> {
  if (!(await deleteRouteRow(deps.db.sequelize, ctx.tenantId, id))) throw new NotFoundError('Inbound route');
}
