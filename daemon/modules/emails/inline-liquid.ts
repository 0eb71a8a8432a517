// A send with `data` and no template: its subject, htmlBody and textBody are Liquid templates, rendered
// with the template engine (and its limits) when the send is accepted, as a batch's inline content is.
// The log and the message carry the result. Without `data` the parts are sent as written, so a body
// that shows `{{` literally is not read as Liquid behind its author's back.
import { ApiError, UnprocessableError } from '../../errors.ts';
import { checkLiquid, renderLiquid, type TemplatePart } from '../../render/liquid.ts';
import type { SendInput } from './validate.ts';

const INLINE_PARTS: TemplatePart[] = ['subject', 'htmlBody', 'textBody'];

function rendersInline(input: SendInput): boolean {
  return input.data !== undefined && !input.templateVersionId;
}

/** The engine's error, named by the request's field (`subject`, `htmlBody`, `textBody`). */
function fieldError(part: TemplatePart, error: unknown): unknown {
  if (!(error instanceof UnprocessableError)) return error;
  const reason = error.message.replace(/^The template's [a-zA-Z ]+? (?=is not|could not)/, '');
  return new ApiError(422, error.code, `${part} ${reason}`, [{ field: part, message: reason.replace(/\.$/, '') }]);
}

/** Refuses broken Liquid now (a scheduled send renders at its time). */
export function checkInlineLiquid(input: SendInput): void {
  if (!rendersInline(input)) return;
  for (const part of INLINE_PARTS) {
    const source = input[part];
    if (!source) continue;
    try {
      checkLiquid(part, source);
    } catch (error) {
      throw fieldError(part, error);
    }
  }
}

/** The send with its parts rendered with its data; unchanged without data or with a template. */
export async function renderInlineLiquid<T extends SendInput>(input: T): Promise<T> {
  if (!rendersInline(input)) return input;
  const data = input.data ?? {};
  const rendered = { ...input };
  for (const part of INLINE_PARTS) {
    const source = input[part];
    if (!source) continue;
    try {
      rendered[part] = await renderLiquid(part, source, data);
    } catch (error) {
      throw fieldError(part, error);
    }
  }
  return rendered;
}
