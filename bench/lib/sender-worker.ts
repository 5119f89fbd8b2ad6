/**
 * The webhook sender in a worker thread: posts signed deliveries `concurrency` at a time and
 * measures each one's time to its status. It runs on its own event loop, so the receiver's work
 * in the main thread does not delay the sending, nor the sending the receiver.
 */
import { parentPort } from 'node:worker_threads';
import { Agent, request } from 'undici';
import type { SendJob, SendResult } from './sender-protocol.js';

const now = () => performance.timeOrigin + performance.now();

async function send(job: SendJob): Promise<SendResult> {
  const agent = new Agent({ connections: job.concurrency, keepAliveTimeout: 10_000 });
  const latenciesMs: number[] = new Array<number>(job.deliveries.length);
  const statuses: Record<string, number> = {};
  let next = 0;
  const startedAtMs = now();
  const worker = async () => {
    while (next < job.deliveries.length) {
      const index = next++;
      const delivery = job.deliveries[index]!;
      const sentAt = now();
      const response = await request(job.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', [job.header]: delivery.signature },
        body: delivery.body,
      });
      latenciesMs[index] = now() - sentAt;
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
      await response.body.dump();
    }
  };
  await Promise.all(Array.from({ length: job.concurrency }, worker));
  const finishedAtMs = now();
  await agent.close();
  return { latenciesMs, statuses, startedAtMs, finishedAtMs };
}

parentPort?.on('message', (job: SendJob) => {
  send(job).then(
    (result) => parentPort!.postMessage({ ok: true, result }),
    (error: unknown) =>
      parentPort!.postMessage({
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      }),
  );
});
