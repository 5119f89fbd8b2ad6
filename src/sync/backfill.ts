import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { RequestState } from '../config/index.js';
import { emptyCounts, type RunCounts, type RunStatus } from '../db/store/run-store.js';
import type { Store } from '../db/store.js';
import { describeError, isTransportError } from '../errors.js';
import type { Logger } from '../log.js';
import { isoFromMs } from '../time.js';
import type { CallTally } from './call-tally.js';
import { importWindow, reconcileWindow } from './backfill-window.js';
import type { ListState } from './ports.js';
import type { SyncClient } from './ports.js';
import type { TimeWindow } from './window.js';
import { forEachConcurrently, SETS_IN_FLIGHT } from './pool.js';
import { createRequestClaims, type RequestClaims } from './request-claims.js';

/** What a backfill covers, and the windows it splits into. */
export interface BackfillPlan {
  fromMs: number;
  toMs: number;
  states: RequestState[];
  chunkHours: number;
  /** Names this backfill's checkpoints: the same arguments resume the same backfill. */
  key: string;
  windows: TimeWindow[];
}

/** Splits a range into windows of `chunkHours` and names it by its arguments. */
export function planBackfill(range: Omit<BackfillPlan, 'key' | 'windows'>): BackfillPlan {
  const chunkMs = range.chunkHours * 3_600_000;
  const windows: TimeWindow[] = [];
  for (let start = range.fromMs; ; start += chunkMs) {
    windows.push({ fromMs: start, toMs: Math.min(start + chunkMs, range.toMs) });
    if (start + chunkMs >= range.toMs) break;
  }
  const key = createHash('sha256')
    .update(JSON.stringify({ ...range, states: [...range.states].sort() }))
    .digest('hex')
    .slice(0, 16);
  return { ...range, key, windows };
}

/** What a backfill needs. */
export interface BackfillDeps {
  client: SyncClient;
  store: Store;
  clock: Clock;
  log: Logger;
  calls: CallTally;
  concurrency: number;
  /** Requests per write transaction: short enough that a running daemon never waits long. */
  batchSize?: number;
  /** Set by runBackfill: the windows it imports at once write distinct requests side by side. */
  claims?: RequestClaims;
}

/**
 * Windows imported at once. A window's passes are mostly one call after another (the partial
 * list, its pages one ahead, the list again), each waiting on the service: one window at a time
 * left most of the `concurrency` call slots idle: a 46-day backfill of 2,000 requests at 50 ms a
 * call took 36 s. Each pass keeps about two calls in flight, so half the slots' worth of windows
 * fills them: 19 s at the default concurrency of 4 (two windows), 9.4 s at 8 (four). The
 * client's limiter still caps the calls in flight at `concurrency`, and their rate.
 */
export const windowsAtOnce = (concurrency: number) => Math.max(1, Math.floor(concurrency / 2));

/** Progress after each window, for the progress bar or log line. */
export interface BackfillProgress {
  windowsDone: number;
  windowsTotal: number;
  windowsSkipped: number;
  counts: RunCounts;
  elapsedMs: number;
}

/** How a backfill ended. */
export interface BackfillResult extends BackfillProgress {
  runId: number;
  status: RunStatus;
  error?: string;
}

/**
 * Imports every window of the plan that is not checkpointed yet, in order, recording each finished
 * window in the database. Writes go through the same store as the poll cycle (same tables, change
 * log and stale guard) but never touch the daemon's state and never mark a request unavailable:
 * a backfill only adds what it sees.
 */
export async function runBackfill(
  deps: BackfillDeps,
  plan: BackfillPlan,
  options: {
    restart?: boolean;
    signal?: AbortSignal;
    onProgress?: (progress: BackfillProgress) => void;
  } = {},
): Promise<BackfillResult> {
  const { store, log } = deps;
  const startedMs = deps.clock.now();
  if (options.restart) await store.transaction((tx) => tx.checkpoints.clear(plan.key));
  const finished = await store.read((tx) => tx.checkpoints.finishedWindows(plan.key));
  const runId = await store.transaction((tx) =>
    tx.runs.start({
      kind: 'backfill',
      startedAt: tx.now(),
      windowFrom: isoFromMs(plan.fromMs),
      windowTo: isoFromMs(plan.toMs),
    }),
  );
  const callsAtStart = deps.calls.snapshot();
  const counts = emptyCounts();
  const progress = (): BackfillProgress => ({
    windowsDone,
    windowsTotal: plan.windows.length,
    windowsSkipped,
    counts: { ...counts, ...deps.calls.since(callsAtStart) },
    elapsedMs: deps.clock.now() - startedMs,
  });
  let windowsDone = 0;
  let windowsSkipped = 0;
  const imported: TimeWindow[] = [];
  let status: RunStatus = 'ok';
  let error: string | undefined;

  log.info(
    { key: plan.key, windows: plan.windows.length, alreadyDone: finished.size },
    'backfill starting',
  );
  // Windows imported at once may share a request (see request-claims.ts).
  const claims = createRequestClaims(SETS_IN_FLIGHT[store.db.engine]);
  const windowDeps: BackfillDeps = { ...deps, claims };
  const atOnce = windowsAtOnce(deps.concurrency);
  try {
    const toImport: TimeWindow[] = [];
    for (const window of plan.windows) {
      if (!finished.has(isoFromMs(window.fromMs))) toImport.push(window);
      else {
        windowsDone += 1;
        windowsSkipped += 1;
      }
    }
    await forEachConcurrently(toImport, atOnce, async (window) => {
      if (options.signal?.aborted) throw options.signal.reason;
      const stored = await importWindow(windowDeps, window, plan.states, counts, options.signal);
      await store.transaction((tx) =>
        tx.checkpoints.markFinished({
          key: plan.key,
          from: isoFromMs(window.fromMs),
          to: isoFromMs(window.toMs),
          at: tx.now(),
          requestsStored: stored,
        }),
      );
      imported.push(window);
      windowsDone += 1;
      options.onProgress?.(progress());
    });
    // A request can move from a window not yet read into one already done. One more read of
    // each imported window's partial list finds it; one list call per window and state.
    if (imported.length > 1) {
      const listStates = plan.states.filter((s): s is ListState => s !== 'awaiting');
      await forEachConcurrently(imported, atOnce, async (window) => {
        for (const state of listStates) {
          if (options.signal?.aborted) throw options.signal.reason;
          await reconcileWindow(windowDeps, window, state, counts, options.signal);
        }
      });
    }
    if (counts.requestsFailed > 0) status = 'partial';
  } catch (thrown) {
    status = options.signal?.aborted ? 'aborted' : 'failed';
    error = describeError(thrown).message;
    if (!isTransportError(thrown) && !options.signal?.aborted)
      log.error({ err: describeError(thrown) }, 'backfill failed');
  }
  const result: BackfillResult = { ...progress(), runId, status, error };
  await store.transaction((tx) =>
    tx.runs.finish(runId, { finishedAt: tx.now(), status, counts: result.counts, error }),
  );
  log.info({ runId, status, windowsDone, windowsSkipped, ...result.counts }, 'backfill finished');
  return result;
}
