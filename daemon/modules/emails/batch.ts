// A batch request becomes one NormalizedSend per recipient; recipients that fail validation are
// listed as rejected instead of failing the whole batch.
import { UnprocessableError, ValidationError } from '../../errors.ts';
import type { BatchBody } from '../../../shared/schemas/emails.ts';
import { normalizeSend, type NormalizedSend } from './validate.ts';

export function buildBatchSends(body: BatchBody): { sends: NormalizedSend[]; rejected: { to: string; reason: string }[] } {
  if (body.slug) {
    throw new UnprocessableError('Sending a batch by template slug is not available yet: pass templateVersionId, or subject and htmlBody.', 'TEMPLATE_RENDERING_UNAVAILABLE');
  }
  if (!body.templateVersionId && !(body.subject && (body.htmlBody || body.textBody))) {
    throw new ValidationError('A batch needs slug, templateVersionId, or subject with htmlBody.', [{ field: 'htmlBody', message: 'slug, templateVersionId or subject + htmlBody is required' }]);
  }
  if (!body.from) throw new ValidationError('A batch without a template needs from.', [{ field: 'from', message: 'is required' }]);
  const { recipients, slug: _slug, idempotencyKey: _key, ...shared } = body;
  const sends: NormalizedSend[] = [];
  const rejected: { to: string; reason: string }[] = [];
  for (const recipient of recipients) {
    try {
      sends.push(normalizeSend({ ...shared, from: body.from, to: recipient.to, data: recipient.data ?? shared.data }));
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      const problem = error.details?.map((d) => `${d.field} ${d.message}`).join('; ') ?? error.message;
      // A fault of the shared fields is the whole batch's fault, not this recipient's.
      if (error.details?.some((d) => !d.field.startsWith('to'))) throw error;
      rejected.push({ to: recipient.to, reason: problem });
    }
  }
  return { sends, rejected };
}
