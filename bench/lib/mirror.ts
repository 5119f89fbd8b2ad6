import { createServiceClient, type ServiceClient } from '../../src/api/index.js';
import type { Clock } from '../../src/clock.js';
import { LIST_CHUNK_REQUESTS } from '../../src/daemon/context.js';
import type { MirrorDb } from '../../src/db/open.js';
import { createStore, type Store } from '../../src/db/store.js';
import { silentLogger } from '../../src/log.js';
import { planBackfill, runBackfill, type BackfillResult } from '../../src/sync/backfill.js';
import { createCallTally, type CallTally } from '../../src/sync/call-tally.js';
import { runPollCycle, type CycleResult, type PollDeps } from '../../src/sync/poll.js';
import type { SyncClient } from '../../src/sync/ports.js';
import { pollWindow } from '../../src/sync/window.js';
import type { BenchDb } from './engines.js';

/** The poll settings the daemon uses by default (config defaults), with concurrency 8. */
export const POLL_SETTINGS: PollDeps['settings'] = {
  windowPastHours: 72,
  windowFutureHours: 336,
  states: ['awaiting', 'accepted', 'completed', 'canceled'],
  concurrency: 8,
  listChunkRequests: LIST_CHUNK_REQUESTS,
};

/** 2025-06-15T12:00:00Z: the fixed "now" of the simulator and the mirror. */
export const NOW_MS = Date.UTC(2025, 5, 15, 12, 0, 0);

/** A clock fixed at `nowMs`: the simulator's world and the poll window agree on now. */
export function fixedClock(nowMs = NOW_MS): Clock {
  return { now: () => nowMs, sleep: async () => undefined };
}

/** The poll window of POLL_SETTINGS at NOW_MS. */
export function benchWindow(): { fromMs: number; toMs: number } {
  return pollWindow(NOW_MS, POLL_SETTINGS.windowPastHours, POLL_SETTINGS.windowFutureHours);
}

/** Detail calls as the engine made them, for the latency case: start and end times. */
export interface DetailSpan {
  startMs: number;
  endMs: number;
}

/** A real mirror (the engine's database, the real client) polling the simulator at `url`. */
export interface BenchMirror {
  db: MirrorDb;
  store: Store;
  client: ServiceClient;
  calls: CallTally;
  deps: PollDeps;
  /** Spans of the detail calls of the cycles run so far; empty it between cycles. */
  detailSpans: DetailSpan[];
  cycle(): Promise<CycleResult>;
  /** Fills the database from in-memory records through the backfill path (no HTTP). */
  seed(client: SyncClient): Promise<BackfillResult>;
  close(): Promise<void>;
}

/** Opens a mirror against `url` in `database` (removed on close). */
export async function openMirror(
  url: string,
  database: BenchDb,
  clock: Clock = fixedClock(),
): Promise<BenchMirror> {
  const db = await database.open();
  const store = createStore({ db, clock });
  const calls = createCallTally();
  const client = createServiceClient({
    authUrl: url,
    hubUrl: url,
    baseUrl: url,
    clientId: 'demo-client',
    clientSecret: 'demo-secret',
    clock,
    rateLimitPerSec: 0,
    concurrency: POLL_SETTINGS.concurrency,
    onCall: (event) => calls.record(event),
  });
  const detailSpans: DetailSpan[] = [];
  const timedClient: SyncClient = {
    listRequests: (query) => client.listRequests(query),
    listRequestDetails: (query) => client.listRequestDetails(query),
    async getRequest(id, options) {
      const startMs = performance.now();
      try {
        return await client.getRequest(id, options);
      } finally {
        detailSpans.push({ startMs, endMs: performance.now() });
      }
    },
  };
  const deps: PollDeps = {
    client: timedClient,
    store,
    clock,
    log: silentLogger(),
    calls,
    settings: POLL_SETTINGS,
  };
  return {
    db,
    store,
    client,
    calls,
    deps,
    detailSpans,
    cycle: () => runPollCycle(deps),
    seed: (memoryClient) => seedStore(store, memoryClient, clock),
    async close() {
      await client.close();
      await database.remove();
    },
  };
}

/**
 * Fills a store through the backfill's path from in-memory records (no HTTP): every window of
 * `range` (default the poll window), all four states.
 */
export function seedStore(
  store: Store,
  client: SyncClient,
  clock: Clock = fixedClock(),
  range: { fromMs: number; toMs: number } = benchWindow(),
  options: { restart?: boolean } = {},
): Promise<BackfillResult> {
  const plan = planBackfill({
    fromMs: range.fromMs,
    toMs: range.toMs,
    states: [...POLL_SETTINGS.states],
    chunkHours: POLL_SETTINGS.windowPastHours + POLL_SETTINGS.windowFutureHours,
  });
  return runBackfill(
    { client, store, clock, log: silentLogger(), calls: createCallTally(), concurrency: 8 },
    plan,
    options,
  );
}
