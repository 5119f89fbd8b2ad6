import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ServiceClient } from '../../../src/api/index.js';
import { planBackfill, runBackfill } from '../../../src/sync/backfill.js';
import { runPollCycle } from '../../../src/sync/poll.js';
import { silentLogger } from '../../../src/log.js';
import type { FaultOptions } from '../../../src/simulator/index.js';
import { startCorruptingProxy } from '../../helpers/corrupting-proxy.js';
import type { MirrorDb } from '../../../src/db/open.js';
import { countRows, queryAll } from '../../helpers/engine.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import { expectMirrorEqualsTruth } from '../../helpers/truth.js';
import { manualClock } from '../../helpers/simulator.js';

/*
 * Sync and backfill under each kind of service fault. After each: the database intact (SQLite's
 * integrity_check ok; see expectDatabaseIntact for PostgreSQL), no committed row lost, and one clean cycle makes the database equal the simulator's truth.
 */

const DAY = 86_400_000;
let mirror: MirrorFixture;
let closeProxy: (() => Promise<void>) | undefined;
const injected: Record<string, number> = {};
afterEach(async () => {
  for (const call of mirror?.sim.calls ?? [])
    if (call.fault) injected[call.fault] = (injected[call.fault] ?? 0) + 1;
  await mirror?.close();
  await closeProxy?.();
  closeProxy = undefined;
});
afterAll(() => {
  // The figures for the record: faults injected by kind across this file.
  console.log('faults injected by kind:', JSON.stringify(injected));
});

const storedIds = async () =>
  new Set(
    (await queryAll<{ request_id: string }>(mirror.db, 'SELECT request_id FROM requests')).map(
      (row) => row.request_id,
    ),
  );

/**
 * The engine's own check of the database. SQLite: `PRAGMA integrity_check` (pages, b-trees,
 * indexes against their tables). PostgreSQL guarantees that structure itself (WAL, crash
 * recovery) and offers no such check without extensions: asserted here is what it can show, that
 * every index of the mirror's schema is valid and ready, and that every table of it reads whole.
 */
async function expectDatabaseIntact(db: MirrorDb): Promise<void> {
  if (db.engine === 'sqlite') {
    expect(db.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    return;
  }
  const indexes = await queryAll<{ index: string; isValid: number; isReady: number }>(
    db,
    `SELECT i.indexrelid::regclass::text AS index, i.indisvalid AS "isValid", i.indisready AS "isReady"
     FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
     WHERE c.relnamespace = current_schema()::regnamespace`,
  );
  expect(indexes.length).toBeGreaterThan(0);
  for (const index of indexes) expect(index, index.index).toMatchObject({ isValid: 1, isReady: 1 });
  const tables = await queryAll<{ name: string }>(
    db,
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
  );
  expect(tables.map((t) => t.name)).toContain('requests');
  for (const { name } of tables) await countRows(db, `"${name}"`);
}

async function expectIntact(before: Set<string>): Promise<void> {
  await expectDatabaseIntact(mirror.db);
  const after = await storedIds();
  for (const id of before) expect(after.has(id), id).toBe(true);
}

/** A faulty cycle and backfill through `client`, then one clean cycle through the fixture's. */
async function faultyRound(faults: FaultOptions, client: ServiceClient = mirror.client) {
  await mirror.cycle();
  const before = await storedIds();
  mirror.sim.mutate(30);
  mirror.sim.setFaults(faults);
  await runPollCycle({ ...mirror.deps, client });
  const plan = planBackfill({
    fromMs: mirror.clock.now() - 3 * DAY,
    toMs: mirror.clock.now() + 10 * DAY,
    states: ['awaiting', 'accepted', 'completed', 'canceled'],
    chunkHours: 48,
  });
  await runBackfill(
    {
      client,
      store: mirror.store,
      clock: mirror.clock,
      log: silentLogger(),
      calls: mirror.calls,
      concurrency: 8,
    },
    plan,
  );
  await expectIntact(before);
  mirror.sim.setFaults({});
  const clean = await mirror.cycle();
  expect(clean.status).toBe('ok');
  await expectMirrorEqualsTruth(mirror);
}

// A short per-attempt timeout for the faulty round: an answer that never comes costs it little.
const clientOptions = { timeouts: { attemptMs: 150 } };
/**
 * Responses slower than the timeout: each one costs a real wait of the timeout, so the faulty
 * round's client gives up after 50 ms, and a slow answer takes four times that. The clean cycle
 * keeps the fixture's client: a busy machine must not turn its ordinary answers into timeouts.
 */
const SLOW = { timeoutMs: 50, faults: { slowMs: 200, slowRate: 0.2 } };

describe('service faults', () => {
  it.each<[string, FaultOptions]>([
    ['bursts of 5xx', { errorRate: 0.35 }],
    ['429 with Retry-After', { rateLimitRate: 0.35, retryAfterSec: 1 }],
    ['dropped connections', { dropRate: 0.25 }],
    ['truncated bodies', { truncateRate: 0.25 }],
    [
      'everything at once',
      { errorRate: 0.1, rateLimitRate: 0.1, dropRate: 0.1, truncateRate: 0.1 },
    ],
  ])('%s: nothing lost, then equal to the truth', async (_name, faults) => {
    // The short timeout serves the faulty round only: the clean cycle, on the fixture's client,
    // must not fail an ordinary answer that a busy machine (a full suite) makes slow.
    mirror = await startMirror({ requests: 100 });
    await faultyRound(faults, mirror.connect(clientOptions));
  });

  it('responses slower than the timeout: nothing lost, then equal to the truth', async () => {
    mirror = await startMirror({ requests: 100 });
    let timedOut = 0;
    const impatient = mirror.connect({
      timeouts: { attemptMs: SLOW.timeoutMs },
      onCall: (event) => {
        mirror.calls.record(event);
        if (event.errorCode === 'api.timeout') timedOut += 1;
      },
    });
    await faultyRound(SLOW.faults, impatient);
    // The round did meet the timeout, and went on past it.
    expect(timedOut).toBeGreaterThan(0);
  });

  it('a token endpoint that is down fails the cycle cleanly; it recovers when the endpoint returns', async () => {
    mirror = await startMirror({ requests: 80, clientOptions });
    await mirror.cycle();
    const before = await storedIds();
    mirror.sim.mutate(20);
    mirror.sim.setFaults({ tokenOutage: true });
    mirror.clock.advance(2 * 3_600_000); // the cached token expires: a new one is needed
    const down = await mirror.cycle();
    expect(down.status).toBe('failed');
    expect(down.error).toMatch(/token/i);
    await expectIntact(before);
    mirror.sim.setFaults({});
    expect((await mirror.cycle()).status).toBe('ok');
    await expectMirrorEqualsTruth(mirror);
  });

  it('tokens that expire mid-cycle are replaced and the call retried once', async () => {
    const simulatorClock = manualClock();
    let details = 0;
    mirror = await startMirror({
      requests: 120,
      simulatorClock,
      serviceUrl: async (target) => {
        const proxy = await startCorruptingProxy(target, (path) => {
          // Half way through the details the service's clock passes the token's expiry.
          if (/\/requests\/[^/]+\/$/.test(path) && ++details === 20)
            simulatorClock.advance(2 * 3_600_000);
          return undefined;
        });
        closeProxy = proxy.close;
        return proxy.url;
      },
    });
    const result = await mirror.cycle();
    expect(result.status).toBe('ok');
    const unauthorized = mirror.sim.calls.filter((call) => call.status === 401);
    expect(unauthorized.length).toBeGreaterThan(0);
    expect(mirror.sim.calls.filter((call) => call.endpoint === 'token').length).toBe(2);
    simulatorClock.set(mirror.clock.now());
    await expectMirrorEqualsTruth(mirror);
  });

  it('reports a list endpoint that is gone (404/410 for the whole endpoint) clearly, without retrying it', async () => {
    mirror = await startMirror({ requests: 50, clientOptions });
    await mirror.cycle();
    mirror.sim.setFaults({ gone: ['list'] });
    mirror.sim.resetCalls();
    const result = await mirror.cycle();
    expect(result.status).toBe('failed');
    expect(result.error).toMatch(/gone|retired|410/i);
    // One call per state, no retries.
    expect(mirror.sim.calls.filter((call) => call.endpoint === 'list')).toHaveLength(3);
    expect(await countRows(mirror.db, 'requests', 'unavailable_at IS NOT NULL')).toBe(0);
    // The full list still answers (awaiting): that is a fault, not the API retired as a whole.
    expect(result.isPollingRetired).toBe(false);

    mirror.sim.setFaults({ gone: ['list', 'details_list'] });
    const retired = await mirror.cycle();
    expect(retired.isPollingRetired).toBe(true);
  });
});
