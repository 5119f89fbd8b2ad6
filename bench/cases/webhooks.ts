/**
 * Case 6: webhook intake. 2,000 signed v2.0 deliveries (RSA-SHA256, as the service signs) posted
 * 50 at a time to the real receiver (startWebhookService) from a sender in a worker thread;
 * events are edits of requests the mirror already holds.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { silentLogger } from '../../src/log.js';
import { createStore } from '../../src/db/store.js';
import { createSimulator } from '../../src/simulator/index.js';
import { planBackfill, runBackfill } from '../../src/sync/backfill.js';
import { createCallTally } from '../../src/sync/call-tally.js';
import type { SyncClient } from '../../src/sync/ports.js';
import { startWebhookService } from '../../src/webhooks/index.js';
import type { BenchContext } from '../lib/context.js';
import { createMemoryClient, parseSnapshot } from '../lib/memory-client.js';
import { benchWindow, fixedClock, NOW_MS, openTempDatabase, POLL_SETTINGS } from '../lib/mirror.js';
import { figure, type Figure } from '../lib/report.js';
import type { Delivery, SendJob, SendResult } from '../lib/sender-protocol.js';
import { snapshotOf } from '../lib/snapshot.js';
import { median, percentile, round } from '../lib/stats.js';
import { createWebhookBodies } from '../lib/webhook-events.js';

const WEBHOOKS = '6 webhook intake';
const HEADER = 'X-VectorCare-Signature';

function sendInWorker(job: SendJob): Promise<SendResult> {
  const worker = new Worker(new URL('../lib/sender-worker.js', import.meta.url));
  return new Promise<SendResult>((resolve, reject) => {
    worker.once(
      'message',
      (reply: { ok: true; result: SendResult } | { ok: false; error: string }) => {
        void worker.terminate();
        if (reply.ok) resolve(reply.result);
        else reject(new Error(`webhook sender: ${reply.error}`));
      },
    );
    worker.once('error', reject);
    worker.postMessage(job);
  });
}

/** Case 6: p50 and p99 time to 2xx, events per second, time until all are applied. */
export async function webhookCase(ctx: BenchContext): Promise<Figure[]> {
  const events = ctx.isQuick ? 500 : 2_000;
  const concurrency = 50;
  ctx.progress(`webhooks: ${events} signed deliveries, concurrency ${concurrency}`);
  const clock = fixedClock();
  const { fromMs, toMs } = benchWindow();
  const sim = createSimulator({
    seed: 13,
    requests: events * 2,
    pastDays: 2,
    futureDays: 10,
    clock,
  });
  const entries = parseSnapshot(snapshotOf(sim, fromMs, toMs));
  const ids = entries.slice(0, events).map((entry) => entry.detail.request_id);
  if (ids.length < events) throw new Error(`only ${ids.length} requests to send events for`);

  const dir = mkdtempSync(join(tmpdir(), 'transport-sync-bench-webhooks-'));
  const temp = await openTempDatabase();
  const store = createStore({ db: temp.db, clock });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyFile = join(dir, 'webhook.pem');
  writeFileSync(keyFile, publicKey.export({ type: 'spki', format: 'pem' }));
  const plan = planBackfill({
    fromMs,
    toMs,
    states: [...POLL_SETTINGS.states],
    chunkHours: POLL_SETTINGS.windowPastHours + POLL_SETTINGS.windowFutureHours,
  });
  await runBackfill(
    {
      client: createMemoryClient(entries),
      store,
      clock,
      log: silentLogger(),
      calls: createCallTally(),
      concurrency: 8,
    },
    plan,
  );
  const noFetch: SyncClient = {
    ...createMemoryClient([]),
    getRequest: () => Promise.reject(new Error('no detail fetch expected')),
  };
  const service = await startWebhookService({
    config: {
      webhookListen: '127.0.0.1:0',
      webhookPath: '/webhooks/',
      webhookSignatureHeader: HEADER,
      webhookPublicKeyFile: keyFile,
      isWebhookUnsignedAllowed: false,
      webhookMaxBodyBytes: 1_048_576,
      concurrency: POLL_SETTINGS.concurrency,
    },
    store,
    client: noFetch,
    log: silentLogger(),
    clock,
    pollingIsOn: false,
  });
  const makeBodies = createWebhookBodies(sim, NOW_MS + 1000);
  const countApplied = temp.db.sqlite.prepare(
    'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NOT NULL AND error IS NULL',
  );
  const p50: number[] = [];
  const p99: number[] = [];
  const rates: number[] = [];
  const applied: number[] = [];
  try {
    for (let run = 0; run < ctx.runs; run += 1) {
      const deliveries: Delivery[] = makeBodies(ids).map((body) => ({
        body,
        signature: sign('sha256', Buffer.from(body), privateKey).toString('base64'),
      }));
      const before = (countApplied.get() as { n: number }).n;
      const result = await sendInWorker({
        url: service.url,
        header: HEADER,
        concurrency,
        deliveries,
      });
      await service.idle();
      const appliedAtMs = performance.timeOrigin + performance.now();
      const ok = result.statuses['200'] ?? 0;
      const nowApplied = (countApplied.get() as { n: number }).n - before;
      if (ok !== events || nowApplied !== events) {
        throw new Error(
          `${ok} of ${events} deliveries got 200 (${JSON.stringify(result.statuses)}), ${nowApplied} applied`,
        );
      }
      p50.push(percentile(result.latenciesMs, 50));
      p99.push(percentile(result.latenciesMs, 99));
      rates.push((events * 1000) / (result.finishedAtMs - result.startedAtMs));
      applied.push(appliedAtMs - result.startedAtMs);
      ctx.progress(
        `  run ${run + 1}: p50 ${p50.at(-1)!.toFixed(1)} ms, p99 ${p99.at(-1)!.toFixed(1)} ms, ${Math.round(rates.at(-1)!)}/s, applied in ${Math.round(applied.at(-1)!)} ms`,
      );
    }
  } finally {
    await service.stop();
    await temp.remove();
    rmSync(dir, { recursive: true, force: true });
    await sim.close();
  }
  ctx.detail('webhooks', { events, concurrency, p50, p99, rates, applied });
  const label = `${events.toLocaleString('en-US')} deliveries, concurrency ${concurrency}`;
  return [
    figure(WEBHOOKS, `${label}: p50 time to 2xx`, round(median(p50)), 'ms', { runs: p50 }),
    figure(WEBHOOKS, `${label}: p99 time to 2xx`, round(median(p99)), 'ms', {
      runs: p99,
      target: { op: '<=', value: 10_000 },
      note: "target: the service's 10 s delivery timeout",
    }),
    figure(WEBHOOKS, `${label}: events received per second`, median(rates), 'events/s', {
      runs: rates,
    }),
    figure(WEBHOOKS, `${label}: time until all are applied`, median(applied), 'ms', {
      runs: applied,
    }),
  ];
}
