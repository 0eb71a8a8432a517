// The templates area renders template versions for the send worker through
// daemon/modules/templates/render.ts `renderTemplateForSend(versionId, data, locale)`. The send
// pipeline loads it on demand so it works whether or not that module has shipped: without it,
// sends that name a template are refused with 422 at accept time.
import type { Sequelize } from 'sequelize';

export interface RenderedTemplate {
  subject: string;
  html: string | null;
  text: string | null;
}

export type RenderTemplateForSend = (
  versionId: string,
  data: Record<string, unknown>,
  locale: string | null,
  context: { sequelize: Sequelize; tenantId: string },
) => Promise<RenderedTemplate>;

const MODULE_PATH = '../modules/templates/render.ts';
let loaded: Promise<RenderTemplateForSend | null> | null = null;

export function loadTemplateRenderer(): Promise<RenderTemplateForSend | null> {
  loaded ??= import(/* @vite-ignore */ MODULE_PATH).then(
    (module: { renderTemplateForSend?: RenderTemplateForSend }) => module.renderTemplateForSend ?? null,
    (error: { code?: string }) => {
      if (error.code === 'ERR_MODULE_NOT_FOUND') return null;
      throw error;
    },
  );
  return loaded;
}
