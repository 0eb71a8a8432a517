import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { table } from '../../format.ts';
import type { QueuesHealth, Readiness } from '../../../shared/schemas/health.ts';
import { EXIT } from '../../errors.ts';

export interface DaemonStatus {
  baseUrl: string;
  ready: Readiness;
  queues: QueuesHealth | null;
  queuesError?: string;
}

export default class DaemonStatusCommand extends SvcCommand<typeof DaemonStatusCommand> {
  static override operations = ['getHealthReady', 'getHealthQueues'];
  static override summary = 'Is the daemon ready, and how deep are its queues?';
  static override description =
    'GET /health/ready, and GET /health/queues when signed in or SVC_API_KEY is set. Exits 5 when the daemon is not ready.';
  static override examples = [
    '<%= config.bin %> daemon status',
    'SVC_BASE_URL=http://10.0.0.5:3000 <%= config.bin %> daemon status --json',
  ];

  async run(): Promise<DaemonStatus> {
    const ready = await this.client.ready();
    let queues: QueuesHealth | null = null;
    let queuesError: string | undefined;
    if (this.client.http.signedIn) {
      try {
        queues = await this.client.queues();
      } catch (error) {
        queuesError = (error as Error).message;
      }
    } else {
      queuesError = 'sign in (or set SVC_API_KEY) to see queue depths';
    }
    const mark = (ok: boolean) => (ok ? chalk.green('✓') : chalk.red('✗'));
    this.log(`${mark(ready.status === 'ready')} ${this.client.http.baseUrl} is ${ready.status}`);
    for (const [name, check] of Object.entries(ready.checks)) {
      const extra =
        'error' in check && check.error
          ? ` ${chalk.red(String(check.error))}`
          : 'pending' in check && Array.isArray(check.pending) && check.pending.length
            ? ` pending: ${check.pending.join(', ')}`
            : '';
      this.log(`  ${mark(check.ok)} ${name}${extra}`);
    }
    for (const warning of ready.warnings ?? []) {
      this.log(`  ${chalk.yellow('!')} ${warning.message}`);
      this.log(chalk.dim(`    fix: ${warning.fix}`));
    }
    if (queues) {
      this.log('');
      this.log(
        table(Object.entries(queues.queues), [
          { header: 'QUEUE', value: ([name]) => name },
          { header: 'DEPTH', value: ([, q]) => String(q.depth) },
          { header: 'RUNNING', value: ([, q]) => String(q.running) },
          { header: 'SCHEDULED', value: ([, q]) => String(q.scheduled) },
          { header: 'FAILED', value: ([, q]) => (q.failed ? chalk.red(String(q.failed)) : '0') },
          {
            header: 'OLDEST WAIT',
            value: ([, q]) => `${Math.round(q.oldestWaitingAgeMs / 1000)} s${q.stuck ? chalk.red(' stuck') : ''}`,
          },
        ]),
      );
    } else if (queuesError) {
      this.log(chalk.dim(`queues: ${queuesError}`));
    }
    const result: DaemonStatus = {
      baseUrl: this.client.http.baseUrl,
      ready,
      queues,
      ...(queuesError ? { queuesError } : {}),
    };
    // Not ready is still an answer worth printing whole; the exit code tells the pipeline.
    if (ready.status !== 'ready') process.exitCode = EXIT.daemon;
    return result;
  }
}
