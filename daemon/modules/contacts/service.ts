// Contact rules: upsert by externalId else by email, keyset pages, bulk rows that fail one by one,
// tags created on first use, and GDPR erasure that really deletes.
import { Op, UniqueConstraintError, fn, col, where as sqlWhere, type Sequelize, type Transaction } from 'sequelize';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { AppDeps } from '../../app-types.ts';
import type { TenantContext } from '../../context.ts';
import { decodeKeysetCursor, encodeKeysetCursor } from '../../db/keyset.ts';
import {
  DEFAULT_CONTACT_PAGE,
  type Contact,
  type ContactListQuery,
  type ContactPage,
  type PatchContactBody,
  type UpsertContactBody,
} from '../../../shared/schemas/contacts.ts';
import {
  countContacts,
  ensureTags,
  findContactPage,
  linkTags,
  recordErasure,
  replaceTagLinks,
  tagNamesOf,
  unlinkTag,
  type ContactRow,
  type KeysetPosition,
} from './model.ts';
import { modelsOf } from '../models.ts';
import { newContactId } from './contact-id.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What the contact services take (the module's deps, or any object with its database). */
export type ContactDeps = Pick<AppDeps, 'db'>;

export function toContact(row: ContactRow, tags: string[]): Contact {
  return {
    id: row.id,
    email: row.email,
    externalId: row.externalId ?? null,
    firstName: row.firstName ?? null,
    lastName: row.lastName ?? null,
    locale: row.locale ?? null,
    optIn: row.optIn,
    tags,
    attributes: row.attributes ?? {},
    projectId: row.projectId ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

async function present(sequelize: Sequelize, row: ContactRow, transaction?: Transaction): Promise<Contact> {
  const tags = await tagNamesOf(sequelize, [row.id], transaction);
  return toContact(row, tags.get(row.id) ?? []);
}

function findByEmail(
  sequelize: Sequelize,
  tenantId: string,
  email: string,
  transaction?: Transaction,
): Promise<ContactRow | null> {
  return modelsOf(sequelize).ContactRow.findOne({
    where: { tenantId, [Op.and]: [sqlWhere(fn('lower', col('email')), email.toLowerCase())] },
    transaction,
  });
}

/** A contact by its id or, failing that, by its externalId. Another tenant's contact is not found. */
async function findByRef(
  sequelize: Sequelize,
  tenantId: string,
  ref: string,
  transaction?: Transaction,
): Promise<ContactRow> {
  const byId = UUID.test(ref)
    ? await modelsOf(sequelize).ContactRow.findOne({ where: { tenantId, id: ref.toLowerCase() }, transaction })
    : null;
  const row =
    byId ?? (await modelsOf(sequelize).ContactRow.findOne({ where: { tenantId, externalId: ref }, transaction }));
  if (!row) throw new NotFoundError(`Contact "${ref}"`);
  return row;
}

async function assertEmailFree(
  sequelize: Sequelize,
  tenantId: string,
  email: string,
  exceptId: string,
  transaction?: Transaction,
): Promise<void> {
  const other = await findByEmail(sequelize, tenantId, email, transaction);
  if (other && other.id !== exceptId) {
    throw new ConflictError(`Another contact (${other.id}) already has the address ${email}.`, 'CONTACT_EMAIL_TAKEN');
  }
}

async function assertExternalIdFree(
  sequelize: Sequelize,
  tenantId: string,
  externalId: string,
  exceptId: string,
  transaction?: Transaction,
): Promise<void> {
  const other = await modelsOf(sequelize).ContactRow.findOne({ where: { tenantId, externalId }, transaction });
  if (other && other.id !== exceptId) {
    throw new ConflictError(
      `Another contact (${other.id}) already has the externalId "${externalId}".`,
      'CONTACT_EXTERNAL_ID_TAKEN',
    );
  }
}

async function upsertInTransaction(
  sequelize: Sequelize,
  tenantId: string,
  body: UpsertContactBody,
  transaction: Transaction,
): Promise<{ row: ContactRow; created: boolean }> {
  let row =
    body.externalId !== undefined
      ? await modelsOf(sequelize).ContactRow.findOne({ where: { tenantId, externalId: body.externalId }, transaction })
      : null;
  if (row) {
    await assertEmailFree(sequelize, tenantId, body.email, row.id, transaction);
  } else {
    row = await findByEmail(sequelize, tenantId, body.email, transaction);
    if (row && body.externalId !== undefined && row.externalId !== null && row.externalId !== body.externalId) {
      throw new ConflictError(
        `The address ${body.email} belongs to the contact with externalId "${row.externalId}", not "${body.externalId}".`,
        'CONTACT_EMAIL_TAKEN',
      );
    }
  }
  const fields = {
    email: body.email,
    ...(body.externalId !== undefined ? { externalId: body.externalId } : {}),
    ...(body.firstName !== undefined ? { firstName: body.firstName } : {}),
    ...(body.lastName !== undefined ? { lastName: body.lastName } : {}),
    ...(body.locale !== undefined ? { locale: body.locale } : {}),
    ...(body.optIn !== undefined ? { optIn: body.optIn } : {}),
    ...(body.attributes !== undefined ? { attributes: body.attributes } : {}),
    ...(body.projectId !== undefined ? { projectId: body.projectId } : {}),
  };
  const created = row === null;
  if (row) {
    row.set(fields);
    // An upsert that changes nothing still says "this contact is current" for sync clients.
    row.changed('updatedAt', true);
    await row.save({ transaction });
  } else {
    row = await modelsOf(sequelize).ContactRow.create({ id: newContactId(), tenantId, ...fields }, { transaction });
  }
  if (body.tags !== undefined) {
    await replaceTagLinks(
      sequelize,
      row.id,
      await ensureTags(sequelize, tenantId, body.tags, transaction),
      transaction,
    );
  }
  return { row, created };
}

/** Unique indexes catch the race of two upserts creating the same contact: the loser retries once and updates. */
async function withUniqueRetry<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof UniqueConstraintError)) throw error;
    try {
      return await work();
    } catch (again) {
      if (again instanceof UniqueConstraintError) {
        throw new ConflictError('Another contact already has this email address or externalId.', 'CONTACT_CONFLICT');
      }
      throw again;
    }
  }
}

export async function upsertContact(
  deps: ContactDeps,
  ctx: TenantContext,
  body: UpsertContactBody,
): Promise<{ contact: Contact; created: boolean }> {
  const { sequelize } = deps.db;
  return withUniqueRetry(() =>
    sequelize.transaction(async (transaction) => {
      const { row, created } = await upsertInTransaction(sequelize, ctx.tenantId, body, transaction);
      return { contact: await present(sequelize, row, transaction), created };
    }),
  );
}

function encodeCursor(position: KeysetPosition): string {
  return encodeKeysetCursor({ at: position.updatedAt, id: position.id });
}

function decodeCursor(cursor: string): KeysetPosition {
  const { at, id } = decodeKeysetCursor(cursor);
  return { updatedAt: at, id };
}

export async function listContacts(
  deps: ContactDeps,
  ctx: TenantContext,
  query: ContactListQuery,
): Promise<ContactPage> {
  const { sequelize } = deps.db;
  const limit = query.limit ?? DEFAULT_CONTACT_PAGE;
  const page = query.page ?? 1;
  const after = query.cursor !== undefined ? decodeCursor(query.cursor) : null;
  const filter = {
    tenantId: ctx.tenantId,
    locale: query.locale,
    optIn: query.optIn,
    updatedSince: query.updatedSince !== undefined ? new Date(query.updatedSince) : undefined,
    projectId: query.projectId,
    tag: query.tag,
  };
  const [total, found] = await Promise.all([
    countContacts(sequelize, filter),
    findContactPage(sequelize, filter, { limit, offset: after ? 0 : (page - 1) * limit, after }),
  ]);
  const tags = await tagNamesOf(
    sequelize,
    found.rows.map((row) => row.id),
  );
  const last = found.positions[found.positions.length - 1];
  return {
    data: found.rows.map((row) => toContact(row, tags.get(row.id) ?? [])),
    meta: {
      page: after ? 1 : page,
      limit,
      total,
      totalPages: Math.ceil(total / limit),
      nextCursor: found.hasMore && last ? encodeCursor(last) : null,
    },
  };
}

export async function getContact(deps: ContactDeps, ctx: TenantContext, input: { ref: string }): Promise<Contact> {
  const { sequelize } = deps.db;
  const { ref } = input;
  return present(sequelize, await findByRef(sequelize, ctx.tenantId, ref));
}

export async function patchContact(
  deps: ContactDeps,
  ctx: TenantContext,
  input: { ref: string; body: PatchContactBody },
): Promise<Contact> {
  const { sequelize } = deps.db;
  const { ref, body } = input;
  return withUniqueRetry(() =>
    sequelize.transaction(async (transaction) => {
      const row = await findByRef(sequelize, ctx.tenantId, ref, transaction);
      if (body.email !== undefined) await assertEmailFree(sequelize, ctx.tenantId, body.email, row.id, transaction);
      if (body.externalId !== undefined && body.externalId !== null) {
        await assertExternalIdFree(sequelize, ctx.tenantId, body.externalId, row.id, transaction);
      }
      const { tags, ...fields } = body;
      row.set(fields);
      row.changed('updatedAt', true);
      await row.save({ transaction });
      if (tags !== undefined) {
        await replaceTagLinks(
          sequelize,
          row.id,
          await ensureTags(sequelize, ctx.tenantId, tags, transaction),
          transaction,
        );
      }
      return present(sequelize, row, transaction);
    }),
  );
}

/** Tag changes count as changes of the contact: sync clients see them through updatedSince. */
async function touch(row: ContactRow, transaction: Transaction): Promise<void> {
  row.changed('updatedAt', true);
  await row.save({ transaction });
}

export async function addContactTags(
  deps: ContactDeps,
  ctx: TenantContext,
  input: { ref: string; tags: string[] },
): Promise<Contact> {
  const { sequelize } = deps.db;
  const { ref, tags } = input;
  return sequelize.transaction(async (transaction) => {
    const row = await findByRef(sequelize, ctx.tenantId, ref, transaction);
    await linkTags(sequelize, row.id, await ensureTags(sequelize, ctx.tenantId, tags, transaction), transaction);
    await touch(row, transaction);
    return present(sequelize, row, transaction);
  });
}

/** Idempotent: removing a tag the contact does not carry changes nothing and still answers the contact. */
export async function removeContactTag(
  deps: ContactDeps,
  ctx: TenantContext,
  input: { ref: string; tag: string },
): Promise<Contact> {
  const { sequelize } = deps.db;
  const { ref, tag } = input;
  return sequelize.transaction(async (transaction) => {
    const row = await findByRef(sequelize, ctx.tenantId, ref, transaction);
    if ((await unlinkTag(sequelize, ctx.tenantId, row.id, tag, transaction)) > 0) await touch(row, transaction);
    return present(sequelize, row, transaction);
  });
}

/** GDPR erasure: the row and its tag links are deleted, not flagged; only who erased which id is kept. */
export async function eraseContact(
  deps: ContactDeps,
  ctx: TenantContext,
  input: { ref: string },
): Promise<{ id: string; erased: true }> {
  const { sequelize } = deps.db;
  const { ref } = input;
  return sequelize.transaction(async (transaction) => {
    const row = await findByRef(sequelize, ctx.tenantId, ref, transaction);
    await row.destroy({ transaction });
    await recordErasure(
      sequelize,
      { tenantId: ctx.tenantId, adminId: ctx.adminId, apiKeyId: ctx.apiKeyId, contactId: row.id, ip: ctx.ip },
      transaction,
    );
    return { id: row.id, erased: true as const };
  });
}
