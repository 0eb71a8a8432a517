// The maintenance loops: put expired leases back in line, run the registered periodic tasks, and
// work the "maintenance" queue when a handler for it exists. Run by maintenance.ts (its own thread)
// or by background.ts (the shared thread).
import { errorText } from '../errors.ts';
import { reclaimExpiredLeases } from '../queue/leases.ts';
import type { MaintenanceTask, WorkerContext } from '../mail/worker-context.ts';
import { JOB_HANDLERS, MAINTENANCE_TASKS } from './handlers.ts';
import { runQueueLoop } from './queue-loop.ts';
import { sleep, type ThreadRuntime } from './thread.ts';

function reclaimTask(everyMs: number): MaintenanceTask {
  return {
    name: 'reclaim-expired-leases',
    everyMs,
    async run(ctx: WorkerContext) {
      const result = await reclaimExpiredLeases(ctx.sequelize);
      if (result.reclaimed || result.failed) ctx.log.warn(result, 'reclaimed jobs whose worker stopped mid-job');
    },
  };
}

/** Runs a task now and then every `everyMs` until shutdown; a failing run is logged, not fatal. */
async function repeat(task: MaintenanceTask, runtime: ThreadRuntime): Promise<void> {
  while (!runtime.signal.aborted) {
    try {
      await task.run(runtime.ctx);
    } catch (error) {
      runtime.ctx.log.error({ task: task.name, err: errorText(error) }, 'maintenance task failed');
    }
    runtime.ctx.log.debug({ task: task.name, nextInMs: task.everyMs }, 'maintenance task ran');
    await sleep(task.everyMs, runtime.signal);
  }
}

export async function maintenanceBody(runtime: ThreadRuntime): Promise<void> {
  const tasks = [reclaimTask(runtime.tuning.reclaimEveryMs), ...MAINTENANCE_TASKS];
  const loops = tasks.map((task) => repeat(task, runtime));
  const load = JOB_HANDLERS.maintenance;
  if (load) loops.push(runQueueLoop(runtime, 'maintenance', await load()));
  await Promise.all(loops);
}
