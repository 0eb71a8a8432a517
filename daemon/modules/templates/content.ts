// What a version may hold for its template's editor mode, checked whenever a version is saved, so that
// a broken template is refused when written rather than when mail is sent.
import { ValidationError, type ErrorDetail } from '../../errors.ts';
import { checkLiquid } from '../../render/liquid.ts';
import { compileTemplateJsx } from '../../render/react-email/compile.ts';
import type { TemplateEditorMode } from '../../../shared/schemas/templates.ts';

export interface VersionContent {
  subject: string;
  htmlBody: string | null;
  textBody: string | null;
  jsx: string | null;
}

const filled = (value: string | null): boolean => value !== null && value.trim() !== '';

export async function checkVersionContent(mode: TemplateEditorMode, content: VersionContent): Promise<void> {
  const details: ErrorDetail[] = [];
  if (mode === 'html') {
    if (!filled(content.htmlBody) && !filled(content.textBody))
      details.push({ field: 'htmlBody', message: 'htmlBody or textBody is required in html mode' });
    if (content.jsx !== null) details.push({ field: 'jsx', message: 'is only for react-email templates' });
  } else {
    if (!filled(content.jsx)) details.push({ field: 'jsx', message: 'is required in react-email mode' });
    if (content.htmlBody !== null)
      details.push({ field: 'htmlBody', message: 'is rendered from jsx in react-email mode and cannot be given' });
  }
  if (details.length)
    throw new ValidationError(`Invalid template content: ${details[0].field} ${details[0].message}.`, details);
  checkLiquid('subject', content.subject);
  if (content.htmlBody !== null) checkLiquid('htmlBody', content.htmlBody);
  if (content.textBody !== null) checkLiquid('textBody', content.textBody);
  if (content.jsx !== null) await compileTemplateJsx(content.jsx);
}
