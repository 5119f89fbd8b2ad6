import type { TableCopy } from '../copy.js';
import type { DatabaseTarget } from '../open.js';
import { runInWorker } from '../worker-thread.js';
import type { CopyProgress } from './write.js';

/**
 * The copy runs in a worker thread with a heap of its own, capped. It holds little at any time
 * (a batch or two, a page of the target, the loaded modules: about 15 MB live), but it turns
 * over gigabytes, and V8 in a process without a memory limit lets garbage grow to about four
 * times what is live before it collects, with a young generation of 32 MB beside it: 180 to
 * 200 MB of RSS for a 100,000-request mirror. Under a cap V8 collects sooner (as it does in a
 * memory cgroup); the cap is far above what the copy holds, and a batch is at most 256 KiB of
 * values (COPY_LIMITS), so it is never reached by a mirror of any size.
 */
export const COPY_HEAP = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 8 } as const;

/** What the worker is given. */
export interface CopyJob {
  sourcePath: string;
  target: DatabaseTarget;
}

/** What the worker says, in order: started, progress..., then its outcome (worker-thread.ts). */
export type CopyMessage =
  { type: 'started' } | { type: 'progress'; table: string; copied: number; total: number };

/**
 * Runs `copyFile` (src/db/copy.ts) in a worker thread (see COPY_HEAP) and resolves with its
 * results; its errors are thrown here as they were there, and the thread's own as Node gives
 * them (runInWorker). `env` becomes the worker's process.env (PGPASSFILE and the like).
 */
export function copyInWorker({
  job,
  env,
  onStarted,
  onProgress,
}: {
  job: CopyJob;
  env: NodeJS.ProcessEnv;
  onStarted?: () => void;
  onProgress?: CopyProgress;
}): Promise<TableCopy[]> {
  return runInWorker<TableCopy[], CopyMessage>({
    url: new URL('./worker.js', import.meta.url),
    workerData: job,
    env,
    resourceLimits: COPY_HEAP,
    name: 'the copy',
    onMessage: (message) => {
      if (message.type === 'started') onStarted?.();
      else onProgress?.(message.table, message.copied, message.total);
    },
  });
}
