/**
 * The paced webhook sender in a worker thread: posts signed deliveries on a fixed schedule, as
 * the service does when its requests change at a steady rate, and notes when each answer's
 * status arrived. On its own event loop, so the listeners in the main thread neither delay the
 * schedule nor the time the answers are seen.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort } from 'node:worker_threads';
import { Agent, request } from 'undici';
import type { PacedSendJob, PacedSendResult } from './paced-sender-protocol.js';

const now = () => performance.timeOrigin + performance.now();

/** Failed requests kept with their reason; the rest are counted by their status 0 alone. */
const ERRORS_KEPT = 5;

async function sendPaced(job: PacedSendJob): Promise<PacedSendResult> {
  const count = job.deliveries.length;
  const result: PacedSendResult = {
    dueAtMs: new Array<number>(count).fill(Number.NaN),
    sentAtMs: new Array<number>(count).fill(Number.NaN),
    answeredAtMs: new Array<number>(count).fill(Number.NaN),
    statuses: new Array<number>(count).fill(0),
    errors: [],
  };
  const agent = new Agent({ connections: job.connections, keepAliveTimeout: 10_000 });
  const post = async (index: number) => {
    const delivery = job.deliveries[index]!;
    result.sentAtMs[index] = now();
    try {
      const response = await request(job.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', [job.header]: delivery.signature },
        body: delivery.body,
      });
      result.answeredAtMs[index] = now();
      result.statuses[index] = response.statusCode;
      await response.body.dump();
    } catch (error) {
      if (result.errors.length < ERRORS_KEPT)
        result.errors.push(error instanceof Error ? error.message : String(error));
    }
  };
  const intervalMs = 1000 / job.ratePerSecond;
  const startAtMs = now();
  const inFlight: Promise<void>[] = [];
  for (let index = 0; index < count; index += 1) {
    // Due times from the start, not from the previous send: a late timer does not push the
    // whole schedule back, the next deliveries catch up.
    const dueAtMs = startAtMs + index * intervalMs;
    result.dueAtMs[index] = dueAtMs;
    const waitMs = dueAtMs - now();
    if (waitMs >= 1) await sleep(waitMs);
    inFlight.push(post(index));
  }
  await Promise.all(inFlight);
  await agent.close();
  return result;
}

parentPort?.on('message', (job: PacedSendJob) => {
  sendPaced(job).then(
    (result) => parentPort!.postMessage({ ok: true, result }),
    (error: unknown) =>
      parentPort!.postMessage({
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      }),
  );
});
