import { afterEach, describe, expect, it } from 'vitest';
import { createServiceClient, type ServiceClient } from '../../../src/api/index.js';
import { systemClock, type Clock } from '../../../src/clock.js';
import { createScheduler } from '../../../src/daemon/scheduler.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { createStore } from '../../../src/db/store.js';
import { silentLogger } from '../../../src/log.js';
import { createReadiness } from '../../../src/ops/freshness.js';
import { startOpsServer, type OpsServer } from '../../../src/ops/http-server.js';
import { createMetrics, type Metrics } from '../../../src/ops/metrics.js';
import { registerDbGauges } from '../../../src/ops/metrics-db.js';
import { createSimulator, type Simulator } from '../../../src/simulator/index.js';
import { createCallTally } from '../../../src/sync/call-tally.js';
import { runPollCycle, type CycleResult, type PollDeps } from '../../../src/sync/poll.js';
import { countRows, createMigratedTestDatabase } from '../../helpers/engine.js';
import { manualClock } from '../../helpers/simulator.js';

/** A daemon's parts as `run` wires them: simulator, client with metric hooks, store, ops server. */
interface Rig {
  sim: Simulator;
  db: MirrorDb;
  client: ServiceClient;
  metrics: Metrics;
  ops: OpsServer;
  deps: PollDeps;
  cycle(signal?: AbortSignal): Promise<CycleResult>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startRig({
  clock,
  pollCron,
  staleAfterCycles,
}: {
  clock: Clock;
  pollCron: string;
  staleAfterCycles: number;
}): Promise<Rig> {
  const sim = createSimulator({ seed: 3, requests: 60, pastDays: 2, futureDays: 5, clock });
  const { url } = await sim.listen(0, '127.0.0.1');
  cleanups.push(() => sim.close());
  const database = await createMigratedTestDatabase();
  cleanups.push(() => database.drop());
  const db = await openDatabase({ location: database.location });
  cleanups.push(() => db.close());
  const metrics = createMetrics();
  registerDbGauges({
    registry: metrics.registry,
    db,
    now: clock.now,
  });
  const calls = createCallTally();
  const client = createServiceClient({
    authUrl: url,
    hubUrl: url,
    baseUrl: url,
    clientId: 'demo-client',
    clientSecret: 'demo-secret',
    clock,
    rateLimitPerSec: 0,
    concurrency: 8,
    // A stopped service must fail a cycle quickly, not after a minute of backoff.
    retry: { maxAttempts: 2, maxTotalMs: 300, baseDelayMs: 10, maxDelayMs: 50 },
    onCall: (event) => {
      calls.record(event);
      metrics.onCall(event);
    },
    onRetry: metrics.onRetry,
    onRateLimitedMs: metrics.onRateLimitedMs,
  });
  cleanups.push(() => client.close());
  const deps: PollDeps = {
    client,
    store: createStore({ db, clock }),
    clock,
    log: silentLogger(),
    calls,
    settings: {
      windowPastHours: 72,
      windowFutureHours: 336,
      states: ['awaiting', 'accepted', 'completed', 'canceled'],
      concurrency: 8,
      listChunkRequests: 20_000,
    },
  };
  const ops = await startOpsServer({
    listen: '127.0.0.1:0',
    metrics,
    readiness: createReadiness({
      db,
      now: clock.now,
      pollCron,
      staleAfterCycles,
      isPollingOn: true,
    }),
    log: silentLogger(),
  });
  cleanups.push(() => ops.stop());
  return {
    sim,
    db,
    client,
    metrics,
    ops,
    deps,
    async cycle(signal) {
      const startedAt = clock.now();
      const result = await runPollCycle(deps, signal);
      metrics.observeCycle(result, clock.now() - startedAt);
      return result;
    },
  };
}

async function get(url: string) {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type'), text };
}

describe('the ops server fed by poll cycles against the simulator (manual clock)', () => {
  it('answers /healthz always, /readyz by freshness, /metrics with the cycles and calls', async () => {
    const clock = manualClock();
    const rig = await startRig({ clock, pollCron: '0 * * * * *', staleAfterCycles: 3 });

    expect((await get(`${rig.ops.url}/healthz`)).status).toBe(200);
    const before = await get(`${rig.ops.url}/readyz`);
    expect(before.status).toBe(503);
    expect(JSON.parse(before.text)).toMatchObject({
      ready: false,
      reason: 'no poll cycle has completed yet',
    });

    await rig.cycle();
    const ready = await get(`${rig.ops.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text)).toMatchObject({
      ready: true,
      freshness_seconds: 0,
      stale_after_seconds: 180,
    });

    // The service goes away: cycles fail, the last success ages, readiness turns at 3 intervals.
    await rig.sim.close();
    clock.advance(60_000);
    await rig.cycle();
    clock.advance(60_000);
    await rig.cycle();
    expect((await get(`${rig.ops.url}/readyz`)).status).toBe(200);
    clock.advance(61_000);
    const stale = await get(`${rig.ops.url}/readyz`);
    expect(stale.status).toBe(503);
    expect(stale.type).toBe('application/json');
    expect(JSON.parse(stale.text)).toMatchObject({
      ready: false,
      reason: 'the last successful cycle is 181 s old (stale after 180 s)',
      freshness_seconds: 181,
    });
    expect((await get(`${rig.ops.url}/healthz`)).status).toBe(200);

    const metrics = await get(`${rig.ops.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metrics.text).toMatch(/^transport_sync_cycles_total\{status="ok"\} 1$/m);
    expect(metrics.text).toMatch(/^transport_sync_cycles_total\{status="failed"\} 2$/m);
    expect(metrics.text).toMatch(/^transport_sync_cycle_duration_seconds_count\{status="ok"\} 1$/m);
    expect(metrics.text).toMatch(
      /^transport_sync_service_calls_total\{endpoint="requests\.list",code="200"\} 3$/m,
    );
    expect(metrics.text).toMatch(
      /^transport_sync_service_calls_total\{endpoint="requests\.list",code="none"\} \d+$/m,
    );
    expect(metrics.text).toMatch(
      /^transport_sync_retries_total\{endpoint="requests\.list"\} \d+$/m,
    );
    expect(metrics.text).toMatch(/^transport_sync_requests\{state="accepted"\} [1-9]\d*$/m);
    expect(metrics.text).toMatch(/^transport_sync_freshness_seconds 181$/m);
    expect(metrics.text).toMatch(/^transport_sync_quarantined_records 0$/m);
    expect(metrics.text).toContain('process_resident_memory_bytes');
    const stored = await countRows(
      rig.db,
      'requests',
      'unavailable_at IS NULL AND list_state = @state',
      { state: 'accepted' },
    );
    expect(metrics.text).toContain(`transport_sync_requests{state="accepted"} ${stored}\n`);
  });

  it('refuses other methods, 404s unknown paths, and hands them to a fallback handler when given', async () => {
    const clock = manualClock();
    const rig = await startRig({ clock, pollCron: '0 * * * * *', staleAfterCycles: 3 });
    const post = await fetch(`${rig.ops.url}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await get(`${rig.ops.url}/webhooks/`)).status).toBe(404);

    const shared = await startOpsServer({
      listen: '127.0.0.1:0',
      metrics: rig.metrics,
      readiness: () => Promise.resolve({ ready: true, reason: 'fresh' }),
      log: silentLogger(),
      extraHandler: (_req, res) => {
        res.writeHead(202, { 'content-type': 'text/plain' });
        res.end('receiver');
      },
    });
    cleanups.push(() => shared.stop());
    const other = await get(`${shared.url}/webhooks/`);
    expect(other).toMatchObject({ status: 202, text: 'receiver' });
    expect((await get(`${shared.url}/healthz/`)).status).toBe(200);
    expect((await get(`${shared.url}/readyz`)).status).toBe(200);
  });

  it('refuses a bad listen address with a config error', async () => {
    await expect(
      startOpsServer({
        listen: 'not a port',
        metrics: createMetrics({ isDefaultMetricsOn: false }),
        readiness: () => Promise.resolve({ ready: true, reason: 'fresh' }),
        log: silentLogger(),
      }),
    ).rejects.toMatchObject({ code: 'config.invalid' });
  });
});

describe('a running scheduler on the real clock', () => {
  it('turns /readyz from 200 to 503 once the simulator has been gone for staleAfterCycles intervals', async () => {
    const pollCron = '* * * * * *'; // every second
    const rig = await startRig({ clock: systemClock, pollCron, staleAfterCycles: 2 });
    const scheduler = createScheduler({
      pattern: pollCron,
      deadlineMs: 2000,
      log: silentLogger(),
      task: async (signal) => (await rig.cycle(signal)).isListComplete,
    });
    scheduler.start();
    cleanups.push(() => scheduler.stop());

    await waitFor(async () => (await get(`${rig.ops.url}/readyz`)).status === 200, 15_000);
    await rig.sim.close();
    const goneAt = Date.now();
    await waitFor(async () => (await get(`${rig.ops.url}/readyz`)).status === 503, 15_000);
    // Not before two intervals have passed without a success.
    expect(Date.now() - goneAt).toBeGreaterThanOrEqual(1000);
    const body = JSON.parse((await get(`${rig.ops.url}/readyz`)).text);
    expect(body.reason).toMatch(/^the last successful cycle is \d+ s old \(stale after 2 s\)$/);
    expect((await get(`${rig.ops.url}/healthz`)).status).toBe(200);
    const metrics = (await get(`${rig.ops.url}/metrics`)).text;
    expect(metrics).toMatch(/^transport_sync_cycles_total\{status="failed"\} [1-9]\d*$/m);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
