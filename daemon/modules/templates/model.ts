// Templates, their versions and their tags.
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';
import type { TemplateEditorMode } from '../../../shared/schemas/templates.ts';

export class Template extends Model<InferAttributes<Template>, InferCreationAttributes<Template>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare projectId: CreationOptional<string | null>;
  declare name: string;
  declare slug: string;
  declare editorMode: TemplateEditorMode;
  declare defaultLocale: CreationOptional<string>;
  /** The sender of a send that names none (null: the send must name one). */
  declare defaultFrom: CreationOptional<string | null>;
  declare createdBy: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export class TemplateVersion extends Model<InferAttributes<TemplateVersion>, InferCreationAttributes<TemplateVersion>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare templateId: string;
  /** 1, 2, 3 … per template. */
  declare version: number;
  declare locale: string;
  declare subject: string;
  declare htmlBody: CreationOptional<string | null>;
  declare textBody: CreationOptional<string | null>;
  declare jsx: CreationOptional<string | null>;
  declare publishedAt: CreationOptional<Date | null>;
  declare createdBy: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export class TemplateTag extends Model<InferAttributes<TemplateTag>, InferCreationAttributes<TemplateTag>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare name: string;
  declare createdAt: CreationOptional<Date>;
}

export class TemplateTagLink extends Model<InferAttributes<TemplateTagLink>, InferCreationAttributes<TemplateTagLink>> {
  declare templateId: string;
  declare tagId: string;
  declare createdAt: CreationOptional<Date>;
}

export function initTemplateModels(sequelize: Sequelize): void {
  Template.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      projectId: { type: DataTypes.UUID, allowNull: true },
      name: { type: DataTypes.TEXT, allowNull: false },
      slug: { type: DataTypes.TEXT, allowNull: false },
      editorMode: { type: DataTypes.TEXT, allowNull: false },
      defaultLocale: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'en' },
      defaultFrom: { type: DataTypes.TEXT, allowNull: true },
      createdBy: { type: DataTypes.UUID, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'templates', underscored: true },
  );
  TemplateVersion.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      templateId: { type: DataTypes.UUID, allowNull: false },
      version: { type: DataTypes.INTEGER, allowNull: false },
      locale: { type: DataTypes.TEXT, allowNull: false },
      subject: { type: DataTypes.TEXT, allowNull: false },
      htmlBody: { type: DataTypes.TEXT, allowNull: true },
      textBody: { type: DataTypes.TEXT, allowNull: true },
      jsx: { type: DataTypes.TEXT, allowNull: true },
      publishedAt: { type: DataTypes.DATE, allowNull: true },
      createdBy: { type: DataTypes.UUID, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'template_versions', underscored: true },
  );
  TemplateTag.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      name: { type: DataTypes.TEXT, allowNull: false },
      createdAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'template_tags', underscored: true, updatedAt: false },
  );
  TemplateTagLink.init(
    {
      templateId: { type: DataTypes.UUID, primaryKey: true },
      tagId: { type: DataTypes.UUID, primaryKey: true },
      createdAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'template_tag_links', underscored: true, updatedAt: false },
  );
}
