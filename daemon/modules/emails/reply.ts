// The one place a send's answer becomes HTTP (send, batch, send-template, resend): 200 when it was
// delivered in the request (sync, SENT), 202 otherwise; the quota after the send in X-Quota-*, and
// Idempotent-Replayed on a stored first answer.
import type { FastifyReply } from 'fastify';
import { quotaHeaders } from '../quota/service.ts';
import type { SendAnswer } from './service.ts';

export function sendStatusOf(answer: SendAnswer): 200 | 202 {
  return answer.sync?.status === 'SENT' || answer.sync?.status === 'DELIVERED' ? 200 : 202;
}

export function replyWithSend(reply: FastifyReply, answer: SendAnswer, statusCode: 200 | 202 = sendStatusOf(answer)) {
  reply.headers(quotaHeaders(answer.quota));
  if (answer.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(statusCode).send(answer.body);
}
