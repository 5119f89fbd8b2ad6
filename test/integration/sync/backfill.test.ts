import { afterEach, describe, expect, it } from 'vitest';
import {
  planBackfill,
  runBackfill,
  windowsAtOnce,
  type BackfillDeps,
} from '../../../src/sync/backfill.js';
import type { RequestState } from '../../../src/config/index.js';
import type { DetailsPage, SyncClient } from '../../../src/sync/ports.js';
import { silentLogger } from '../../../src/log.js';
import { failSecondTransaction, holdFirstTransaction } from '../../helpers/held-store.js';
import { countRows, queryAll, queryOne, testEngine } from '../../helpers/engine.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import { expectMirrorEqualsTruth, truthInWindow } from '../../helpers/truth.js';

const DAY = 86_400_000;
let mirror: MirrorFixture;
afterEach(async () => mirror?.close());

function deps(m: MirrorFixture, client: SyncClient = m.client): BackfillDeps {
  return {
    client,
    store: m.store,
    clock: m.clock,
    log: silentLogger(),
    calls: m.calls,
    concurrency: 8,
    batchSize: 50,
  };
}

/** A plan over the last `days` up to now, all four states. */
function lastDays(m: MirrorFixture, days: number, chunkHours: number) {
  const toMs = m.clock.now();
  return planBackfill({
    fromMs: toMs - days * DAY,
    toMs,
    states: ['awaiting', 'accepted', 'completed', 'canceled'],
    chunkHours,
  });
}

const ninetyDays = (m: MirrorFixture) => lastDays(m, 90, 24 * 7);

const range = (plan: { fromMs: number; toMs: number }) => ({
  from: new Date(plan.fromMs).toISOString(),
  to: new Date(plan.toMs).toISOString(),
});

/** The stored version of a request, its JSON parsed (PostgreSQL's jsonb reprints it). */
async function storedVersion(m: MirrorFixture, id: string) {
  const row = await queryOne<{ raw_json: string }>(
    m.db,
    'SELECT service_level_type, last_updated_timestamp_utc, raw_json FROM requests WHERE request_id = @id',
    { id },
  );
  return row && { ...row, raw_json: JSON.parse(row.raw_json) as unknown };
}

/**
 * A mirror over 10 days of 200 requests in pages of 5 (no churn, no drift), a plan over them in
 * `states`, and a client that tells when the first page has been read: each state's pass writes
 * several sets of 5.
 */
async function pagedBackfill(states: RequestState[]) {
  mirror = await startMirror({
    requests: 200,
    pastDays: 10,
    futureDays: 0,
    pageSize: 5,
    roughness: { pagingChurnRate: 0, driftRate: 0 },
  });
  const plan = planBackfill({
    fromMs: mirror.clock.now() - 10 * DAY,
    toMs: mirror.clock.now(),
    states,
    chunkHours: 24 * 10,
  });
  const paged = mirror;
  let isPaging = false;
  const client: SyncClient = {
    ...paged.client,
    async *listRequestDetails(query) {
      for await (const page of paged.client.listRequestDetails(query)) {
        isPaging = true;
        yield page;
      }
    },
  };
  return { mirror: paged, plan, client, isPaging: () => isPaging };
}

describe('backfill against the simulator', () => {
  it('imports 90 days from the full list, equal to the truth, without a detail call per request', async () => {
    // Moves while paging have their own test below; this one counts calls exactly.
    mirror = await startMirror({
      requests: 400,
      pastDays: 90,
      futureDays: 0,
      pageSize: 25,
      roughness: { pagingChurnRate: 0 },
    });
    const plan = ninetyDays(mirror);
    const result = await runBackfill(deps(mirror), plan);
    expect(result.status).toBe('ok');
    expect(result.windowsDone).toBe(plan.windows.length);
    await expectMirrorEqualsTruth(mirror, range(plan));
    expect(result.counts.requestsNew).toBe(
      truthInWindow(mirror, range(plan)).filter((t) => t.isVisible).length,
    );
    expect(result.counts.detailCalls).toBe(0);
    const run = await queryOne(
      mirror.db,
      "SELECT kind, status, requests_new FROM sync_runs WHERE kind = 'backfill'",
    );
    expect(run).toEqual({
      kind: 'backfill',
      status: 'ok',
      requests_new: result.counts.requestsNew,
    });
    // The daemon's state is not touched, and nothing is marked unavailable.
    expect(await mirror.store.read((tx) => tx.state.get('last_success_at'))).toBeUndefined();
    expect(await countRows(mirror.db, 'requests', 'unavailable_at IS NOT NULL')).toBe(0);
  });

  it('resumes after the last finished window when interrupted, without fetching finished windows again', async () => {
    mirror = await startMirror({
      requests: 300,
      pastDays: 90,
      futureDays: 0,
      pageSize: 25,
      roughness: { pagingChurnRate: 0 },
    });
    const plan = ninetyDays(mirror);
    const controller = new AbortController();
    const first = await runBackfill(deps(mirror), plan, {
      signal: controller.signal,
      onProgress: (progress) => progress.windowsDone === 4 && controller.abort(new Error('killed')),
    });
    expect(first.status).toBe('aborted');
    const finished = (
      await queryAll<{ window_from: string }>(
        mirror.db,
        'SELECT window_from FROM backfill_windows WHERE backfill_key = @key',
        { key: plan.key },
      )
    ).map((row) => row.window_from);
    // Windows are imported several at once: one that was finishing when the abort came counts.
    expect(finished.length).toBeGreaterThanOrEqual(4);
    expect(finished.length).toBeLessThan(plan.windows.length);

    mirror.sim.resetCalls();
    const second = await runBackfill(deps(mirror), plan);
    expect(second.status).toBe('ok');
    expect(second.windowsSkipped).toBe(finished.length);
    const askedFrom = new Set(
      mirror.sim.calls
        .filter((call) => call.endpoint !== 'token')
        .map((call) => new Date(Number(call.query.date__gte) * 1000).toISOString()),
    );
    for (const from of finished)
      expect(
        askedFrom.has(new Date(Math.floor(Date.parse(from) / 1000) * 1000).toISOString()),
      ).toBe(false);
    await expectMirrorEqualsTruth(mirror, range(plan));

    // --restart reads everything again.
    mirror.sim.resetCalls();
    const restarted = await runBackfill(deps(mirror), plan, { restart: true });
    expect(restarted.windowsSkipped).toBe(0);
    expect(restarted.counts.requestsUnchanged).toBeGreaterThan(0);
  });

  it('misses no request when the pages shift under it, and never overwrites a newer stored record', async () => {
    mirror = await startMirror({ requests: 200, pastDays: 20, futureDays: 0, pageSize: 10 });
    const plan = planBackfill({
      fromMs: mirror.clock.now() - 20 * DAY,
      toMs: mirror.clock.now(),
      states: ['accepted', 'completed', 'canceled'],
      chunkHours: 24 * 30,
    });
    const before = truthInWindow(mirror, range(plan)).filter(
      (t) => t.isVisible && t.listState !== 'awaiting',
    );
    const newest = before
      .map((t) => t.eventDtUtc)
      .sort()
      .at(-1)!;
    // After each first page: requests inserted ahead (pushing the rest down a page) and
    // requests removed behind (pulling the rest up a page, so the pages skip some).
    const shifting: SyncClient = {
      listRequests: (query) => mirror.client.listRequests(query),
      getRequest: (id, options) => mirror.client.getRequest(id, options),
      async *listRequestDetails(query) {
        for await (const page of mirror.client.listRequestDetails(query)) {
          yield page;
          if (page.page === 1) {
            mirror.sim.addRequests(5, {
              state: query.state === 'awaiting' ? 'awaiting' : query.state,
              eventAt: Date.parse(newest) - 1000,
            });
            for (const gone of mirror.sim
              .truth()
              .filter((t) => t.isVisible && t.listState === query.state)
              .slice(0, 3)) {
              mirror.sim.world.makeUnavailable(gone.requestId, 'reassigned');
            }
          }
        }
      },
    };
    const result = await runBackfill(deps(mirror, shifting), plan);
    expect(result.status).toBe('ok');
    const stored = new Set(
      (await queryAll<{ request_id: string }>(mirror.db, 'SELECT request_id FROM requests')).map(
        (row) => row.request_id,
      ),
    );
    const stillVisible = new Set(
      mirror.sim
        .truth()
        .filter((t) => t.isVisible)
        .map((t) => t.requestId),
    );
    for (const truth of before)
      if (stillVisible.has(truth.requestId))
        expect(stored.has(truth.requestId), truth.requestId).toBe(true);
    expect(result.counts.detailCalls).toBeGreaterThan(0); // the pages skipped some; the partial list caught them

    // Responses recorded now, replayed after a newer poll, stand for a backfill that read its
    // pages before the edit: they must not overwrite what the poll stored.
    const recorded = {
      lists: new Map<string, Awaited<ReturnType<SyncClient['listRequests']>>>(),
      pages: new Map<string, DetailsPage[]>(),
    };
    const recording: SyncClient = {
      async listRequests(query) {
        const result = await mirror.client.listRequests(query);
        recorded.lists.set(`${query.state}:${query.from}`, result);
        return result;
      },
      getRequest: (id, options) => mirror.client.getRequest(id, options),
      async *listRequestDetails(query) {
        const pages: DetailsPage[] = [];
        recorded.pages.set(`${query.state}:${query.from}`, pages);
        for await (const page of mirror.client.listRequestDetails(query)) {
          pages.push(page);
          yield page;
        }
      },
    };
    await runBackfill(deps(mirror, recording), plan, { restart: true });
    const [edited] = before.filter((t) => stillVisible.has(t.requestId));
    mirror.clock.advance(60_000);
    mirror.sim.world.editRequest(edited!.requestId, 'service_level');
    await mirror.cycle();
    const polled = await storedVersion(mirror, edited!.requestId);
    expect(polled).toBeDefined();
    const replaying: SyncClient = {
      listRequests: async (query) => recorded.lists.get(`${query.state}:${query.from}`)!,
      getRequest: (id, options) => mirror.client.getRequest(id, options),
      async *listRequestDetails(query) {
        yield* recorded.pages.get(`${query.state}:${query.from}`) ?? [];
      },
    };
    const replay = await runBackfill(deps(mirror, replaying), plan, { restart: true });
    expect(replay.counts.requestsChanged).toBe(0);
    expect(await storedVersion(mirror, edited!.requestId)).toEqual(polled);
  });

  it('stores every request visible at its end, in every state, while the simulator moves requests between the pages', async () => {
    // The simulator's own churn: at each paging moment a request appears at the newest end of
    // the window, jumps there from a later page, or vanishes from a page already read.
    mirror = await startMirror({
      requests: 400,
      pastDays: 28,
      futureDays: 0,
      pageSize: 8,
      seed: 31,
      roughness: { pagingChurnRate: 0.5 },
    });
    const plan = lastDays(mirror, 28, 24 * 7);
    const mutations: string[] = [];
    mirror.sim.events.on('mutation', (m: { requestId: string }) => mutations.push(m.requestId));
    const result = await runBackfill(deps(mirror), plan);
    expect(result.status, result.error).toBe('ok');
    expect(mutations.length).toBeGreaterThan(5); // the pages did move
    await expectMirrorEqualsTruth(mirror, range(plan), { isVisibleOnly: true });
  });

  // On PostgreSQL only: SQLite has one connection, and there a pass writes one set at a time.
  it.skipIf(testEngine() !== 'postgres')(
    'writes the next set of a pass while the one before it commits on PostgreSQL',
    async () => {
      const { plan, client, isPaging } = await pagedBackfill([
        'awaiting',
        'accepted',
        'completed',
        'canceled',
      ]);
      // The first set's transaction is held until another starts.
      const held = holdFirstTransaction(mirror.store, isPaging);
      // Only for the failure: written one set at a time, the pass would wait here for good.
      const valve = setTimeout(held.release, 10_000);
      try {
        const result = await runBackfill(
          { ...deps(mirror, client), store: held.store, batchSize: 5 },
          plan,
        );
        expect(result.status, result.error).toBe('ok');
        expect(held.startedWhileHeld()).toBeGreaterThan(0);
      } finally {
        clearTimeout(valve);
      }
      await expectMirrorEqualsTruth(mirror, range(plan));
    },
  );

  it('ends a pass with the error of a set that failed once the set before it has committed', async () => {
    const { plan, client, isPaging } = await pagedBackfill(['completed']);
    // On PostgreSQL the first set's transaction is held until the second, written beside it,
    // has failed; on SQLite the second follows the first.
    const isBeside = testEngine() === 'postgres';
    const failing = failSecondTransaction(mirror.store, isPaging, isBeside);
    const valve = setTimeout(failing.release, 10_000);
    try {
      const result = await runBackfill(
        { ...deps(mirror, client), store: failing.store, batchSize: 5 },
        plan,
      );
      expect(result.status).toBe('failed');
      expect(result.error).toContain('disk full');
      expect(failing.started()).toBe(2);
    } finally {
      clearTimeout(valve);
    }
    // The first set committed, and stays.
    expect(await countRows(mirror.db, 'requests')).toBe(5);
  });

  it('logs and counts a request once when two windows imported at once both read it', async () => {
    mirror = await startMirror({
      requests: 300,
      pastDays: 30,
      futureDays: 0,
      pageSize: 10,
      roughness: { pagingChurnRate: 0 },
    });
    const plan = lastDays(mirror, 30, 24 * 3);
    // Each window reaches back over the second half of the one before it, which is imported at
    // the same time (concurrency 8: four windows at once): half the requests are read twice.
    const halfMs = (3 * DAY) / 2;
    const overlapping = {
      ...plan,
      windows: plan.windows.map((window, i) =>
        i === 0 ? window : { ...window, fromMs: window.fromMs - halfMs },
      ),
    };
    expect(windowsAtOnce(deps(mirror).concurrency)).toBeGreaterThan(1);
    const result = await runBackfill(deps(mirror), overlapping);
    expect(result.status, result.error).toBe('ok');
    const stored = await countRows(mirror.db, 'requests');
    expect(result.counts.requestsNew).toBe(stored);
    expect(await countRows(mirror.db, 'request_changes', "kind = 'created'")).toBe(stored);
    await expectMirrorEqualsTruth(mirror, range(plan));
  });

  it('runs alongside a poll cycle on the same database, both completing', async () => {
    mirror = await startMirror({
      requests: 300,
      pastDays: 30,
      futureDays: 5,
      roughness: { pagingChurnRate: 0 },
    });
    const plan = planBackfill({
      fromMs: mirror.clock.now() - 30 * DAY,
      toMs: mirror.clock.now() + 5 * DAY,
      states: ['awaiting', 'accepted', 'completed', 'canceled'],
      chunkHours: 24,
    });
    const [backfill, cycle] = await Promise.all([runBackfill(deps(mirror), plan), mirror.cycle()]);
    expect(backfill.status).toBe('ok');
    expect(cycle.status).toBe('ok');
    await expectMirrorEqualsTruth(mirror, range(plan));
  });
});
