import { parentPort, workerData } from 'node:worker_threads';
import { TransportError } from '../../errors.js';
import { copyFile } from '../copy.js';
import { machineError } from '../machine-errors.js';
import type { CopyJob, CopyMessage, FailureReport } from './job.js';

/*
 * The worker thread copyInWorker (job.ts) starts: runs copyFile and reports to the main thread.
 * Errors cross as data: a coded error with its code and hint, anything else with its stack.
 */

const post = (message: CopyMessage) => parentPort!.postMessage(message);

function reportOf(error: unknown): FailureReport {
  const known = error instanceof TransportError ? error : machineError(error);
  if (known) {
    const { code, message, hint, isRetryable, details } = known;
    return {
      kind: 'coded',
      options: { code, message, isRetryable, details, ...(hint !== undefined && { hint }) },
    };
  }
  const unexpected = error instanceof Error ? error : new Error(String(error));
  return { kind: 'unexpected', message: unexpected.message, stack: unexpected.stack };
}

const job = workerData as CopyJob;
try {
  const results = await copyFile({
    sourcePath: job.sourcePath,
    target: job.target,
    onStarted: () => post({ type: 'started' }),
    onProgress: (table, copied, total) => post({ type: 'progress', table, copied, total }),
  });
  post({ type: 'done', results });
} catch (error) {
  post({ type: 'failed', error: reportOf(error) });
}
