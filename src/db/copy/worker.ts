import { parentPort, workerData } from 'node:worker_threads';
import { copyFile, type TableCopy } from '../copy.js';
import { reportOf, type WorkerOutcome } from '../worker-thread.js';
import type { CopyJob, CopyMessage } from './job.js';

/*
 * The worker thread copyInWorker (job.ts) starts: runs copyFile and reports to the main thread.
 * Errors cross as data (worker-thread.ts).
 */

const post = (message: CopyMessage | WorkerOutcome<TableCopy[]>) =>
  parentPort!.postMessage(message);

const job = workerData as CopyJob;
try {
  const results = await copyFile({
    sourcePath: job.sourcePath,
    target: job.target,
    onStarted: () => post({ type: 'started' }),
    onProgress: (table, copied, total) => post({ type: 'progress', table, copied, total }),
  });
  post({ type: 'done', result: results });
} catch (error) {
  post({ type: 'failed', error: reportOf(error) });
}
