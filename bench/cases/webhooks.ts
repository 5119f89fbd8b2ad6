/**
 * Beyond issue 16's table (issue 8's case 6): webhook intake over HTTP, on each engine. 2,000
 * signed v2.0 deliveries (RSA-SHA256, as the service signs) posted 50 at a time to the real
 * receiver (startWebhookService) from a sender in a worker thread; events are edits of requests
 * the mirror already holds. p50 and p99 time to 2xx, events received per second, and the time
 * until all are applied.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { silentLogger } from '../../src/log.js';
import { createStore } from '../../src/db/store.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { SyncClient } from '../../src/sync/ports.js';
import { startWebhookService } from '../../test/helpers/webhook-service.js';
import { forEachEngine, type BenchCase, type BenchContext } from '../lib/context.js';
import type { EngineHarness, EngineName } from '../lib/engines.js';
import { createMemoryClient, parseSnapshot } from '../lib/memory-client.js';
import { benchWindow, fixedClock, NOW_MS, POLL_SETTINGS, seedStore } from '../lib/mirror.js';
import { figure, specs, type Figure } from '../lib/report.js';
import type { Delivery, SendJob, SendResult } from '../lib/sender-protocol.js';
import { snapshotOf } from '../lib/snapshot.js';
import { median, percentile, round } from '../lib/stats.js';
import { createWebhookBodies } from '../lib/webhook-events.js';

const CASE = 'webhooks';
const CONCURRENCY = 50;
const eventsOf = (ctx: BenchContext) => (ctx.isQuick ? 300 : 2_000);

function planFor(engine: EngineName, events: number) {
  const spec = specs(CASE, engine);
  const label = `webhook intake over HTTP, ${events.toLocaleString('en-US')} signed deliveries at concurrency ${CONCURRENCY}`;
  return {
    p50: spec('webhooks.p50', null, `${label}: p50 time to 2xx`, 'ms'),
    p99: spec('webhooks.p99', null, `${label}: p99 time to 2xx (the service waits 10 s)`, 'ms', {
      target: { op: '<=', value: 10_000 },
    }),
    rate: spec('webhooks.rate', null, `${label}: events received per second`, 'events/s'),
    applied: spec('webhooks.applied', null, `${label}: time until all are applied`, 'ms'),
  };
}
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

async function measureEngine(ctx: BenchContext, engine: EngineHarness): Promise<Figure[]> {
  const events = eventsOf(ctx);
  const plan = planFor(engine.name, events);
  ctx.progress(`webhooks ${engine.name}: ${events} signed deliveries, concurrency ${CONCURRENCY}`);
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
  const database = await engine.create();
  const store = createStore({ db: await database.open(), clock });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyFile = join(dir, 'webhook.pem');
  writeFileSync(keyFile, publicKey.export({ type: 'spki', format: 'pem' }));
  await seedStore(store, createMemoryClient(entries), clock);
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
  const countApplied = async () =>
    Number(
      (
        await store.read((tx) =>
          tx.sql.get<{ n: number }>(
            'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NOT NULL AND error IS NULL',
          ),
        )
      )?.n,
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
      const before = await countApplied();
      const result = await sendInWorker({
        url: service.url,
        header: HEADER,
        concurrency: CONCURRENCY,
        deliveries,
      });
      await service.idle();
      const appliedAtMs = performance.timeOrigin + performance.now();
      const ok = result.statuses['200'] ?? 0;
      const nowApplied = (await countApplied()) - before;
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
    await database.remove();
    rmSync(dir, { recursive: true, force: true });
    await sim.close();
  }
  ctx.detail(`webhooks.${engine.name}`, {
    events,
    concurrency: CONCURRENCY,
    p50,
    p99,
    rates,
    applied,
  });
  return [
    figure(plan.p50, round(median(p50)), { runs: p50 }),
    figure(plan.p99, round(median(p99)), { runs: p99 }),
    figure(plan.rate, median(rates), { runs: rates }),
    figure(plan.applied, median(applied), { runs: applied }),
  ];
}

export const webhookCase: BenchCase = {
  name: CASE,
  plan: (ctx) => ctx.engineNames.flatMap((engine) => [planFor(engine, eventsOf(ctx)).p99]),
  run: (ctx) => forEachEngine(ctx, CASE, (engine) => measureEngine(ctx, engine)),
};
