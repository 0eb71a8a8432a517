// Following a campaign's send: GET /campaigns/{id} polled until it is no longer SENDING, as
// progress states for the bar (Ink) or the plain lines (pipelines).
import type { SvcClient } from '../client.ts';
import type { CampaignDetail } from '../../shared/schemas/campaigns.ts';
import type { ProgressState } from '../ui/Progress.tsx';

const number = (n: number) => n.toLocaleString('en');

export function campaignProgress(campaign: CampaignDetail): ProgressState {
  const handled = campaign.accepted + campaign.rejected;
  const total = campaign.total ?? campaign.audienceSize;
  return {
    done: campaign.status === 'SENT' ? total : handled,
    total,
    label: `${number(campaign.accepted)} accepted · ${number(campaign.rejected)} rejected · ${number(campaign.remaining ?? 0)} remaining of ${number(total)}`,
    detail: `${campaign.status}${campaign.cancelledSends ? ` · ${number(campaign.cancelledSends)} queued sends taken back` : ''}${campaign.lastError ? ` · ${campaign.lastError}` : ''}`,
  };
}

/**
 * Yields the campaign each time it is read, until it leaves SENDING, or stalls: SENDING with a
 * lastError (quota reached, sending paused) waits for a retry that may be hours away.
 */
export async function* followCampaign(
  client: SvcClient,
  id: string,
  everyMs: number,
  signal?: AbortSignal,
): AsyncGenerator<CampaignDetail> {
  for (;;) {
    const campaign = await client.getCampaign(id);
    yield campaign;
    if (campaign.status !== 'SENDING' || campaign.lastError || signal?.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export async function* progressOf(campaigns: AsyncIterable<CampaignDetail>): AsyncGenerator<ProgressState> {
  for await (const campaign of campaigns) yield campaignProgress(campaign);
}

export interface WatchOptions {
  /** Draw the Ink bar (a terminal, not --json). */
  live: boolean;
  /** Print one plain line per change (no terminal, not --json). */
  log?: (line: string) => void;
  everyMs?: number;
}

/** Follows the send to its end: the live bar, or a plain line whenever the counts change. Answers the last read. */
export async function watchCampaign(client: SvcClient, id: string, options: WatchOptions): Promise<CampaignDetail> {
  let last: CampaignDetail | null = null;
  const reads = (async function* () {
    for await (const campaign of followCampaign(client, id, options.everyMs ?? 1000)) {
      last = campaign;
      yield campaign;
    }
  })();
  if (options.live) {
    const { renderProgress } = await import('../ui/render.ts');
    await renderProgress(`Campaign ${id}`, progressOf(reads));
  } else {
    let previous = '';
    for await (const campaign of reads) {
      const { label, detail } = campaignProgress(campaign);
      const line = `${detail} · ${label}`;
      if (line !== previous) options.log?.(line);
      previous = line;
    }
  }
  return last ?? client.getCampaign(id);
}
