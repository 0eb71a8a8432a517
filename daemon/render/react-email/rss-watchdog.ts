// The last layer against memory a render takes by a path the other layers do not know (see off-heap.mjs):
// the daemon's resident memory, which every worker thread shares. While renders run it may grow, over what
// it was when the first of them began, by at most a fixed allowance per running render; past that every
// running render is ended, because their shares of one process's memory cannot be told apart.
import { UnprocessableError } from '../../errors.ts';

export interface RssWatchdogOptions {
  /** Growth allowed for each running render: its heap, its off-heap budget and the worker itself. */
  perRenderBytes: number;
  intervalMs: number;
  readRss?: () => number;
}

type Abort = (error: UnprocessableError) => void;

export class RssWatchdog {
  private readonly running = new Set<Abort>();
  private baseline = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly readRss: () => number;

  constructor(private readonly options: RssWatchdogOptions) {
    this.readRss = options.readRss ?? (() => process.memoryUsage.rss());
  }

  /** Watches one render until the returned function is called; `abort` ends it past the allowance. */
  watch(abort: Abort): () => void {
    if (this.running.size === 0) {
      this.baseline = this.readRss();
      this.timer = setInterval(() => this.check(), this.options.intervalMs);
      this.timer.unref();
    }
    this.running.add(abort);
    return () => {
      this.running.delete(abort);
      if (this.running.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    };
  }

  check(): void {
    const grown = this.readRss() - this.baseline;
    const allowed = this.running.size * this.options.perRenderBytes;
    if (this.running.size === 0 || grown <= allowed) return;
    const mb = (bytes: number) => Math.round(bytes / 1048576);
    const error = new UnprocessableError(
      `The renderer's memory grew by ${mb(grown)} MB while ${this.running.size} template(s) rendered, more than the ${mb(allowed)} MB they may use together; the render was stopped.`,
      'RENDER_MEMORY_LIMIT',
    );
    for (const abort of [...this.running]) abort(error);
  }
}
