import { totalmem } from 'node:os';
import type { Config } from '../config/index.js';
import { runInWorker } from '../db/worker-thread.js';
import { outOfMemory } from './out-of-memory.js';
import type { BackfillPlan, BackfillProgress, BackfillResult } from '../sync/backfill.js';

/**
 * The backfill runs in a worker thread with a heap of its own, capped, as the copy does
 * (src/db/copy/job.ts). It holds a few sets of records at a time, but it turns over gigabytes,
 * and V8 in a process without a memory limit lets garbage grow to several times what is live
 * before it collects, beside a young generation of up to 48 MB. Backfills of 10,000 and 100,000
 * requests peaked at 187 and 211 MB of RSS on SQLite (172 and 206 MB on PostgreSQL); in this
 * worker, at 152 and 155 MB (139 and 136), for about 7 % more time (docs/performance.md,
 * "Memory"). A young generation of 16 MB rather than the copy's 8, which cost 15 % of a
 * 100,000-request backfill's time (more objects outlive a scavenge). The cap on the old
 * generation is far above what a backfill holds; were it reached, the backfill stops with
 * `cli.out_of_memory` and resumes, like any stop, after the windows it finished.
 */
export const BACKFILL_HEAP = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 16 } as const;

/**
 * The worker's heap limits: BACKFILL_HEAP, unless the process runs under a memory limit that sizes
 * V8's heaps smaller still. Node sizes each thread's heap from its cgroup's limit
 * (`process.constrainedMemory()`): an old generation of a quarter of it, and a young one smaller
 * than 16 MB. Under the units' MemoryMax=1G that gave a backfill of 100,000 requests 132 MB, and
 * BACKFILL_HEAP in the same cgroup 154 MB; under a limit above 1 GiB, or none, the cap is the
 * smaller. `constrainedMb` is the limit in MB; a value at or above the machine's memory is none.
 */
export function backfillHeap(
  constrainedMb: number,
  machineMb: number,
): typeof BACKFILL_HEAP | undefined {
  const isLimited = constrainedMb > 0 && constrainedMb < machineMb;
  return isLimited && constrainedMb / 4 <= BACKFILL_HEAP.maxOldGenerationSizeMb
    ? undefined
    : BACKFILL_HEAP;
}

const MB = 2 ** 20;
/** backfillHeap for this process. */
const heapHere = () => backfillHeap((process.constrainedMemory?.() ?? 0) / MB, totalmem() / MB);

/** What the worker is given. */
export interface BackfillJob {
  config: Config;
  plan: BackfillPlan;
  restart: boolean;
  /** The main thread's log goes to a terminal: the worker's lines are rendered for a person. */
  isLogTerminal: boolean;
}

/** What the worker says besides its outcome (src/db/worker-thread.ts): log lines and progress. */
export type BackfillMessage =
  { type: 'log'; text: string } | { type: 'progress'; progress: BackfillProgress };

/**
 * Runs the backfill (src/cli/backfill-worker.ts) in a worker thread (see BACKFILL_HEAP) and
 * resolves with its result; its errors are thrown here as they were there. `env` becomes the
 * worker's process.env (PGPASSFILE and the like); `signal` stops it as a signal would; `onLog`
 * gets its log lines, in order with its progress.
 */
export async function backfillInWorker({
  job,
  env,
  signal,
  onLog,
  onProgress,
}: {
  job: BackfillJob;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  onLog: (text: string) => void;
  onProgress: (progress: BackfillProgress) => void;
}): Promise<BackfillResult> {
  const limits = heapHere();
  try {
    return await runInWorker<BackfillResult, BackfillMessage>({
      url: new URL('./backfill-worker.js', import.meta.url),
      workerData: job,
      env,
      ...(limits && { resourceLimits: limits }),
      signal,
      name: 'the backfill',
      onMessage: (message) => {
        if (message.type === 'log') onLog(message.text);
        else onProgress(message.progress);
      },
    });
  } catch (error) {
    throw outOfMemory(error, {
      task: 'the backfill',
      hint: 'Run the same command again: it resumes after the windows it finished. A smaller --chunk-hours holds fewer requests at once.',
    });
  }
}
