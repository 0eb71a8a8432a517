// Evaluates compiled tenant JSX in a worker thread that serves exactly one render (see
// sandbox-worker.mjs for the layers inside it). Starting a worker and loading React costs ≈ 0.4-0.7 s
// on a busy 2-core machine, so one warm spare is kept ready: a render takes the spare (used once,
// then terminated) and a new spare starts behind it. Isolation is per render; latency is not paid twice.
// A ReactEmailSandbox is created by each app, SMTP edge and worker thread that renders
// (mail/resources.ts) and closed at its shutdown.
import { Worker } from 'node:worker_threads';
import { ServiceUnavailableError, UnprocessableError } from '../../errors.ts';
import { SANDBOX_GLOBAL_NAME } from './compile.ts';
import { RssWatchdog } from './rss-watchdog.ts';

export const SANDBOX_LIMITS = {
  /** Wall clock for the tenant's code, from handing it over to the HTML coming back. */
  timeoutMs: 2000,
  /** Starting the worker and loading React, before any tenant code runs. */
  startupTimeoutMs: 15_000,
  maxOldGenerationSizeMb: 64,
  maxYoungGenerationSizeMb: 16,
  stackSizeMb: 4,
  /** ArrayBuffers, typed arrays, Buffers: memory beside the heap, counted over the whole render. */
  offHeapMb: 32,
  /** How often the worker checks its own ArrayBuffer memory while a template waits. */
  watchdogIntervalMs: 20,
  /** The daemon's RSS may grow by this much per running render (heap 80 + off-heap 32 + the worker ≈ 60, measured). */
  rssPerRenderMb: 256,
  rssCheckIntervalMs: 50,
  /** Renders running at once; more wait their turn (the machine has few cores). */
  concurrency: 2,
  /** Renders allowed to wait for a slot; beyond that the renderer answers 503 at once. */
  maxWaiting: 20,
  maxHtmlChars: 2_000_000,
} as const;

const WORKER_URL = new URL('./sandbox-worker.mjs', import.meta.url);

type WorkerAnswer = { ok: true; html: string } | { ok: false; kind: string; message: string };

function startWorker(): Promise<Worker> {
  const worker = new Worker(WORKER_URL, {
    // React's production build; nothing else of the daemon's environment reaches the thread.
    env: { NODE_ENV: 'production' },
    execArgv: [],
    argv: [],
    workerData: {
      offHeapBytes: SANDBOX_LIMITS.offHeapMb * 1024 * 1024,
      watchdogIntervalMs: SANDBOX_LIMITS.watchdogIntervalMs,
    },
    resourceLimits: {
      maxOldGenerationSizeMb: SANDBOX_LIMITS.maxOldGenerationSizeMb,
      maxYoungGenerationSizeMb: SANDBOX_LIMITS.maxYoungGenerationSizeMb,
      stackSizeMb: SANDBOX_LIMITS.stackSizeMb,
    },
  });
  // A late 'error' (e.g. out of memory after we gave up on the worker) must never become an
  // unhandled event that takes the daemon down.
  worker.on('error', () => {});
  worker.unref();
  return new Promise<Worker>((resolve, reject) => {
    const onReady = () => {
      detach();
      resolve(worker);
    };
    const onError = (error: Error) => fail(error.message);
    const onExit = (code: number) => fail(`exit code ${code}`);
    const detach = () => {
      clearTimeout(timer);
      worker.off('message', onReady).off('error', onError).off('exit', onExit);
    };
    const fail = (message: string) => {
      detach();
      void worker.terminate();
      reject(
        new ServiceUnavailableError(`The React Email renderer could not start: ${message}`, 'RENDERER_UNAVAILABLE'),
      );
    };
    const timer = setTimeout(
      () => fail(`not ready after ${SANDBOX_LIMITS.startupTimeoutMs} ms`),
      SANDBOX_LIMITS.startupTimeoutMs,
    );
    timer.unref();
    worker.once('message', onReady).once('error', onError).once('exit', onExit);
  });
}

function failure(answer: Extract<WorkerAnswer, { ok: false }>): UnprocessableError {
  if (answer.kind === 'no-component') return new UnprocessableError(answer.message, 'RENDER_NO_COMPONENT');
  if (answer.kind === 'memory') return new UnprocessableError(answer.message, 'RENDER_MEMORY_LIMIT');
  return new UnprocessableError(`The React Email template failed while rendering: ${answer.message}`, 'RENDER_FAILED');
}

function runOnce(worker: Worker, rssWatchdog: RssWatchdog, code: string, propsJson: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      unwatch();
      clearTimeout(timer);
      worker.off('message', onAnswer).off('error', onError).off('exit', onExit);
      void worker.terminate();
      action();
    };
    const onAnswer = (answer: WorkerAnswer) =>
      settle(() => {
        if (!answer.ok) return reject(failure(answer));
        if (answer.html.length > SANDBOX_LIMITS.maxHtmlChars) {
          return reject(
            new UnprocessableError(
              `The rendered HTML is larger than ${SANDBOX_LIMITS.maxHtmlChars} characters.`,
              'RENDER_TOO_LARGE',
            ),
          );
        }
        resolve(answer.html);
      });
    const onError = (error: Error & { code?: string }) =>
      settle(() => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
          reject(
            new UnprocessableError(
              `The React Email template used more than the ${SANDBOX_LIMITS.maxOldGenerationSizeMb} MB it may use.`,
              'RENDER_MEMORY_LIMIT',
            ),
          );
        } else {
          reject(
            new UnprocessableError(
              `The React Email template failed while rendering: ${error.message.slice(0, 300)}`,
              'RENDER_FAILED',
            ),
          );
        }
      });
    const onExit = (exitCode: number) =>
      settle(() =>
        reject(
          new UnprocessableError(
            `The React Email template stopped the renderer (exit code ${exitCode}).`,
            'RENDER_FAILED',
          ),
        ),
      );
    const timer = setTimeout(() => {
      settle(() =>
        reject(
          new UnprocessableError(
            `The React Email template did not finish rendering within ${SANDBOX_LIMITS.timeoutMs} ms.`,
            'RENDER_TIMEOUT',
          ),
        ),
      );
    }, SANDBOX_LIMITS.timeoutMs);
    const unwatch = rssWatchdog.watch((error) => settle(() => reject(error)));
    worker.once('message', onAnswer).once('error', onError).once('exit', onExit);
    worker.ref();
    worker.postMessage({ code, propsJson, globalName: SANDBOX_GLOBAL_NAME });
  });
}

/** Renders tenant JSX in single-use workers: at most SANDBOX_LIMITS.concurrency at once, a warm spare between. */
export class ReactEmailSandbox {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  private spare: Promise<Worker> | null = null;
  private readonly rssWatchdog = new RssWatchdog({
    perRenderBytes: SANDBOX_LIMITS.rssPerRenderMb * 1024 * 1024,
    intervalMs: SANDBOX_LIMITS.rssCheckIntervalMs,
  });

  /** Runs compiled template code with `props` in a single-use worker; answers the HTML document. */
  async render(code: string, props: unknown): Promise<string> {
    const propsJson = JSON.stringify(props ?? {});
    await this.acquireSlot();
    try {
      const worker = await this.takeWorker();
      return await runOnce(worker, this.rssWatchdog, code, propsJson);
    } finally {
      this.releaseSlot();
    }
  }

  /** Stops the warm spare (the owner's shutdown). */
  async close(): Promise<void> {
    const current = this.spare;
    this.spare = null;
    if (current) await current.then((worker) => worker.terminate()).catch(() => undefined);
  }

  private async acquireSlot(): Promise<void> {
    if (this.running < SANDBOX_LIMITS.concurrency) {
      this.running += 1;
      return;
    }
    if (this.waiting.length >= SANDBOX_LIMITS.maxWaiting) {
      throw new ServiceUnavailableError(
        'The React Email renderer is busy: try again in a few seconds.',
        'RENDERER_BUSY',
      );
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private releaseSlot(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }

  private takeWorker(): Promise<Worker> {
    const taken = this.spare ?? startWorker();
    this.spare = startWorker();
    this.spare.catch(() => {
      this.spare = null;
    });
    return taken;
  }
}
