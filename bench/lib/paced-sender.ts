import { Worker } from 'node:worker_threads';
import type { PacedSendJob, PacedSendResult } from './paced-sender-protocol.js';

/** Runs `job` in a new paced-sender worker (paced-sender-worker.ts) and ends the worker. */
export function sendPacedInWorker(job: PacedSendJob): Promise<PacedSendResult> {
  const worker = new Worker(new URL('./paced-sender-worker.js', import.meta.url));
  return new Promise<PacedSendResult>((resolve, reject) => {
    worker.once(
      'message',
      (reply: { ok: true; result: PacedSendResult } | { ok: false; error: string }) => {
        void worker.terminate();
        if (reply.ok) resolve(reply.result);
        else reject(new Error(`paced webhook sender: ${reply.error}`));
      },
    );
    worker.once('error', reject);
    worker.postMessage(job);
  });
}
