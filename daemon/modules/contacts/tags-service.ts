// The tenant's contact-tag catalogue. Tags are also created on first use by contact writes.
import { UniqueConstraintError, type Sequelize } from 'sequelize';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { TenantContext } from '../../context.ts';
import type { ContactDeps } from './service.ts';
import type { ContactTag, CreateContactTagBody, UpdateContactTagBody } from '../../../shared/schemas/contacts.ts';
import { listTagsWithCounts, type TagWithCount } from './model.ts';
import { modelsOf } from '../models.ts';

function toTag(tag: TagWithCount): ContactTag {
  return { ...tag, createdAt: tag.createdAt.toISOString(), updatedAt: tag.updatedAt.toISOString() };
}

async function oneTag(sequelize: Sequelize, tenantId: string, name: string): Promise<ContactTag> {
  const [tag] = await listTagsWithCounts(sequelize, tenantId, name);
  if (!tag) throw new NotFoundError(`Contact tag "${name}"`);
  return toTag(tag);
}

export async function listContactTags(deps: ContactDeps, ctx: TenantContext): Promise<{ data: ContactTag[] }> {
  const { sequelize } = deps.db;
  return { data: (await listTagsWithCounts(sequelize, ctx.tenantId)).map(toTag) };
}

function duplicate(name: string): ConflictError {
  return new ConflictError(`The contact tag "${name}" already exists.`, 'CONTACT_TAG_EXISTS');
}

export async function createContactTag(
  deps: ContactDeps,
  ctx: TenantContext,
  body: CreateContactTagBody,
): Promise<ContactTag> {
  const { sequelize } = deps.db;
  try {
    await modelsOf(sequelize).ContactTagRow.create({
      tenantId: ctx.tenantId,
      name: body.name,
      description: body.description ?? null,
    });
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw duplicate(body.name);
    throw error;
  }
  return oneTag(sequelize, ctx.tenantId, body.name);
}

/** Renaming keeps every contact's link: links point at the tag's id, not its name. */
export async function updateContactTag(
  deps: ContactDeps,
  ctx: TenantContext,
  input: { name: string; body: UpdateContactTagBody },
): Promise<ContactTag> {
  const { sequelize } = deps.db;
  const { name, body } = input;
  const tag = await modelsOf(sequelize).ContactTagRow.findOne({ where: { tenantId: ctx.tenantId, name } });
  if (!tag) throw new NotFoundError(`Contact tag "${name}"`);
  if (body.name !== undefined && body.name !== name) {
    if (await modelsOf(sequelize).ContactTagRow.findOne({ where: { tenantId: ctx.tenantId, name: body.name } }))
      throw duplicate(body.name);
    tag.name = body.name;
  }
  if (body.description !== undefined) tag.description = body.description;
  try {
    await tag.save();
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw duplicate(body.name ?? name);
    throw error;
  }
  return oneTag(sequelize, ctx.tenantId, tag.name);
}

export async function deleteContactTag(
  deps: ContactDeps,
  ctx: TenantContext,
  input: { name: string },
): Promise<{ ok: true }> {
  const { name } = input;
  const removed = await modelsOf(deps.db.sequelize).ContactTagRow.destroy({ where: { tenantId: ctx.tenantId, name } });
  if (removed === 0) throw new NotFoundError(`Contact tag "${name}"`);
  return { ok: true };
}
