import { parentPort, workerData } from 'node:worker_threads';
import { copyFile } from '../copy.js';
import { postOutcome } from '../worker-thread.js';
import type { CopyJob, CopyMessage } from './job.js';

/*
 * The worker thread copyInWorker (job.ts) starts: runs copyFile and reports to the main thread.
 * Errors cross as data (worker-thread.ts).
 */

const port = parentPort!;
const post = (message: CopyMessage) => port.postMessage(message);

const job = workerData as CopyJob;
await postOutcome(port, () =>
  copyFile({
    sourcePath: job.sourcePath,
    target: job.target,
    onStarted: () => post({ type: 'started' }),
    onProgress: (table, copied, total) => post({ type: 'progress', table, copied, total }),
  }),
);
