// Contacts, contact tags and their links: the models and the SQL that does not fit a model call.
import {
  DataTypes,
  Model,
  QueryTypes,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
  type Transaction,
} from 'sequelize';

export class ContactRow extends Model<InferAttributes<ContactRow>, InferCreationAttributes<ContactRow>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare projectId: CreationOptional<string | null>;
  declare email: string;
  declare externalId: CreationOptional<string | null>;
  declare firstName: CreationOptional<string | null>;
  declare lastName: CreationOptional<string | null>;
  declare locale: CreationOptional<string | null>;
  declare optIn: CreationOptional<boolean>;
  declare attributes: CreationOptional<Record<string, unknown>>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export class ContactTagRow extends Model<InferAttributes<ContactTagRow>, InferCreationAttributes<ContactTagRow>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare name: string;
  declare description: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export function initContactModels(sequelize: Sequelize): void {
  ContactRow.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      projectId: { type: DataTypes.UUID, allowNull: true },
      email: { type: DataTypes.TEXT, allowNull: false },
      externalId: { type: DataTypes.TEXT, allowNull: true },
      firstName: { type: DataTypes.TEXT, allowNull: true },
      lastName: { type: DataTypes.TEXT, allowNull: true },
      locale: { type: DataTypes.TEXT, allowNull: true },
      optIn: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      attributes: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'contacts', underscored: true },
  );
  ContactTagRow.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      name: { type: DataTypes.TEXT, allowNull: false },
      description: { type: DataTypes.TEXT, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'contact_tags', underscored: true },
  );
}

/** Ids of the named tags, creating the ones the tenant does not have yet. */
export async function ensureTags(
  sequelize: Sequelize,
  tenantId: string,
  names: string[],
  transaction?: Transaction,
): Promise<string[]> {
  if (names.length === 0) return [];
  const unique = [...new Set(names)];
  await sequelize.query(
    `INSERT INTO contact_tags (tenant_id, name) SELECT :tenantId, n FROM unnest(ARRAY[:names]::text[]) AS n
     ON CONFLICT (tenant_id, name) DO NOTHING`,
    { replacements: { tenantId, names: unique }, transaction },
  );
  const rows = await sequelize.query<{ id: string }>(
    `SELECT id FROM contact_tags WHERE tenant_id = :tenantId AND name IN (:names)`,
    {
      replacements: { tenantId, names: unique },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return rows.map((row) => row.id);
}

export async function linkTags(
  sequelize: Sequelize,
  contactId: string,
  tagIds: string[],
  transaction?: Transaction,
): Promise<void> {
  if (tagIds.length === 0) return;
  // contact_tag_links has no foreign keys (migration 0477): the contact and the tags are share-locked
  // here, so neither can be deleted before the links are committed, and one already deleted gets none.
  await sequelize.query(
    `INSERT INTO contact_tag_links (contact_id, tag_id)
     SELECT c.id, t.id FROM contacts c JOIN contact_tags t ON t.id IN (:tagIds) WHERE c.id = :contactId
        FOR KEY SHARE OF c, t
     ON CONFLICT DO NOTHING`,
    { replacements: { contactId, tagIds }, transaction },
  );
}

/** Makes the contact's links exactly `tagIds`. */
export async function replaceTagLinks(
  sequelize: Sequelize,
  contactId: string,
  tagIds: string[],
  transaction?: Transaction,
): Promise<void> {
  await sequelize.query(
    tagIds.length === 0
      ? `DELETE FROM contact_tag_links WHERE contact_id = :contactId`
      : `DELETE FROM contact_tag_links WHERE contact_id = :contactId AND tag_id NOT IN (:tagIds)`,
    { replacements: { contactId, tagIds }, transaction },
  );
  await linkTags(sequelize, contactId, tagIds, transaction);
}

export async function unlinkTag(
  sequelize: Sequelize,
  tenantId: string,
  contactId: string,
  name: string,
  transaction?: Transaction,
): Promise<number> {
  const [, result] = await sequelize.query(
    `DELETE FROM contact_tag_links l USING contact_tags t
     WHERE l.tag_id = t.id AND t.tenant_id = :tenantId AND t.name = :name AND l.contact_id = :contactId`,
    { replacements: { tenantId, contactId, name }, transaction },
  );
  return (result as { rowCount?: number } | undefined)?.rowCount ?? 0;
}

/** Tag names of each contact, sorted. */
export async function tagNamesOf(
  sequelize: Sequelize,
  contactIds: string[],
  transaction?: Transaction,
): Promise<Map<string, string[]>> {
  const names = new Map<string, string[]>(contactIds.map((id) => [id, []]));
  if (contactIds.length === 0) return names;
  const rows = await sequelize.query<{ contact_id: string; name: string }>(
    `SELECT l.contact_id, t.name FROM contact_tag_links l JOIN contact_tags t ON t.id = l.tag_id
     WHERE l.contact_id IN (:contactIds) ORDER BY t.name`,
    { replacements: { contactIds }, type: QueryTypes.SELECT, transaction },
  );
  for (const row of rows) names.get(row.contact_id)?.push(row.name);
  return names;
}

export interface ContactFilter {
  tenantId: string;
  locale?: string;
  optIn?: boolean;
  updatedSince?: Date;
  projectId?: string;
  tag?: string;
}

/** Position after which the next page starts: the exact text of updated_at (microseconds kept) and the id. */
export interface KeysetPosition {
  updatedAt: string;
  id: string;
}

function whereOf(filter: ContactFilter): { sql: string; replacements: Record<string, unknown> } {
  const clauses = ['c.tenant_id = :tenantId'];
  const replacements: Record<string, unknown> = { tenantId: filter.tenantId };
  if (filter.locale !== undefined) {
    clauses.push('lower(c.locale) = lower(:locale)');
    replacements.locale = filter.locale;
  }
  if (filter.optIn !== undefined) {
    clauses.push('c.opt_in = :optIn');
    replacements.optIn = filter.optIn;
  }
  if (filter.updatedSince !== undefined) {
    clauses.push('c.updated_at >= :updatedSince');
    replacements.updatedSince = filter.updatedSince;
  }
  if (filter.projectId !== undefined) {
    clauses.push('c.project_id = :projectId');
    replacements.projectId = filter.projectId;
  }
  if (filter.tag !== undefined) {
    clauses.push(`EXISTS (SELECT 1 FROM contact_tag_links l JOIN contact_tags t ON t.id = l.tag_id
                  WHERE l.contact_id = c.id AND t.tenant_id = :tenantId AND t.name = :tag)`);
    replacements.tag = filter.tag;
  }
  return { sql: clauses.join(' AND '), replacements };
}

export async function countContacts(sequelize: Sequelize, filter: ContactFilter): Promise<number> {
  const where = whereOf(filter);
  const rows = await sequelize.query<{ total: string }>(`SELECT count(*) AS total FROM contacts c WHERE ${where.sql}`, {
    replacements: where.replacements,
    type: QueryTypes.SELECT,
  });
  return Number(rows[0].total);
}

/**
 * One page in (updated_at, id) order, oldest change first, so that a client syncing with
 * updatedSince + cursor sees a contact changed mid-walk again at the end instead of missing it.
 * Fetches one row more than asked to tell whether another page follows.
 */
export async function findContactPage(
  sequelize: Sequelize,
  filter: ContactFilter,
  options: { limit: number; offset: number; after: KeysetPosition | null },
): Promise<{ rows: ContactRow[]; positions: KeysetPosition[]; hasMore: boolean }> {
  const where = whereOf(filter);
  let sql = where.sql;
  const replacements: Record<string, unknown> = {
    ...where.replacements,
    limit: options.limit + 1,
    offset: options.offset,
  };
  if (options.after) {
    sql += ' AND (c.updated_at, c.id) > (CAST(:afterUpdatedAt AS timestamptz), CAST(:afterId AS uuid))';
    replacements.afterUpdatedAt = options.after.updatedAt;
    replacements.afterId = options.after.id;
  }
  const found = await sequelize.query<{ id: string; position: string }>(
    `SELECT c.id, c.updated_at::text AS position FROM contacts c WHERE ${sql}
     ORDER BY c.updated_at, c.id LIMIT :limit OFFSET :offset`,
    { replacements, type: QueryTypes.SELECT },
  );
  const page = found.slice(0, options.limit);
  const rows =
    page.length === 0
      ? []
      : await ContactRow.findAll({ where: { tenantId: filter.tenantId, id: page.map((row) => row.id) } });
  const byId = new Map(rows.map((row) => [row.id, row]));
  return {
    rows: page.map((row) => byId.get(row.id)).filter((row): row is ContactRow => row !== undefined),
    positions: page.map((row) => ({ updatedAt: row.position, id: row.id })),
    hasMore: found.length > options.limit,
  };
}

export interface TagWithCount {
  name: string;
  description: string | null;
  contacts: number;
  createdAt: Date;
  updatedAt: Date;
}

export async function listTagsWithCounts(
  sequelize: Sequelize,
  tenantId: string,
  name?: string,
): Promise<TagWithCount[]> {
  const rows = await sequelize.query<{
    name: string;
    description: string | null;
    contacts: string;
    created_at: Date;
    updated_at: Date;
  }>(
    `SELECT t.name, t.description, t.created_at, t.updated_at,
            (SELECT count(*) FROM contact_tag_links l WHERE l.tag_id = t.id) AS contacts
     FROM contact_tags t WHERE t.tenant_id = :tenantId ${name === undefined ? '' : 'AND t.name = :name'} ORDER BY t.name`,
    { replacements: { tenantId, name: name ?? null }, type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({
    name: row.name,
    description: row.description,
    contacts: Number(row.contacts),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  }));
}

/** Who erased which contact; the address itself is not kept (that is the point of erasing). */
export async function recordErasure(
  sequelize: Sequelize,
  entry: { tenantId: string; adminId: string | null; apiKeyId: string | null; contactId: string; ip?: string },
  transaction?: Transaction,
): Promise<void> {
  await sequelize.query(
    `INSERT INTO audit_events (tenant_id, admin_id, api_key_id, action, target, ip) VALUES (:tenantId, :adminId, :apiKeyId, 'contact.erased', :contactId, :ip)`,
    { replacements: { ...entry, ip: entry.ip ?? null }, transaction },
  );
}

/** Matching contacts per locale (lower-cased; null for contacts without one). Campaign coverage reads this. */
export async function countContactsByLocale(
  sequelize: Sequelize,
  filter: ContactFilter,
): Promise<{ locale: string | null; contacts: number }[]> {
  const where = whereOf(filter);
  const rows = await sequelize.query<{ locale: string | null; contacts: string }>(
    `SELECT lower(c.locale) AS locale, count(*) AS contacts FROM contacts c WHERE ${where.sql} GROUP BY lower(c.locale) ORDER BY 1 NULLS LAST`,
    { replacements: where.replacements, type: QueryTypes.SELECT },
  );
  return rows.map((row) => ({ locale: row.locale, contacts: Number(row.contacts) }));
}
