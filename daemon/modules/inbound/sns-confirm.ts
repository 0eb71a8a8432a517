// Confirming an SNS subscription means one GET to the SubscribeURL SNS sent. It runs as a job in
// the 'webhook' queue rather than inside the request: SNS expects a quick 200, and a confirmation
// that fails (AWS briefly unreachable) is retried with the queue's backoff instead of being lost.
import { errorText } from '../../errors.ts';
import type { Sequelize, Transaction } from 'sequelize';
import { enqueueJob } from '../../queue/enqueue.ts';
import type { JobOutcome } from '../../queue/types.ts';
import type { WorkerContext } from '../../mail/worker-context.ts';
import { backoffDelayMs } from '../../queue/backoff.ts';
import { isAmazonSubscribeUrl } from './service.ts';

export const SNS_CONFIRM_JOB = 'sns-subscription-confirm';
const CONFIRM_TIMEOUT_MS = 10_000;

export async function enqueueSnsConfirmation(
  sequelize: Sequelize,
  subscribeUrl: string,
  transaction?: Transaction,
): Promise<string> {
  return enqueueJob(
    sequelize,
    {
      queue: 'webhook',
      payload: { kind: SNS_CONFIRM_JOB, subscribeUrl },
      key: `sns-confirm:${subscribeUrl}`,
      maxAttempts: 5,
    },
    transaction,
  );
}

export async function runSnsConfirmation(
  payload: Record<string, unknown>,
  attemptsSoFar: number,
  ctx: WorkerContext,
): Promise<JobOutcome> {
  const url = payload.subscribeUrl;
  // Checked again here: the job row is data, and only Amazon's endpoints may be fetched.
  if (typeof url !== 'string' || !isAmazonSubscribeUrl(url))
    return { kind: 'fail', error: 'the SubscribeURL is not an https sns.<region>.amazonaws.com URL' };
  try {
    const response = await fetch(url, {
      method: 'GET',
      redirect: 'manual',
      signal: AbortSignal.timeout(CONFIRM_TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (response.ok) {
      ctx.log.info({ topic: new URL(url).searchParams.get('TopicArn') }, 'confirmed the SNS subscription');
      return { kind: 'done' };
    }
    return {
      kind: 'retry',
      delayMs: backoffDelayMs(attemptsSoFar, 30_000),
      error: `SNS answered ${response.status} to the subscription confirmation`,
    };
  } catch (error) {
    return {
      kind: 'retry',
      delayMs: backoffDelayMs(attemptsSoFar, 30_000),
      error: `could not reach SNS: ${errorText(error)}`,
    };
  }
}
