import { Cron } from 'croner';
import type { Connection } from '../db/sql.js';
import { readSyncState } from '../db/store/sync-state-store.js';
import { NO_INTAKE_HINT, readPollingRetiredAt } from './mode.js';
import { LAST_SUCCESS_KEY } from '../sync/poll.js';

/** How fresh the mirror is, and whether that counts as stale. */
export interface Freshness {
  /** End of the last cycle that completed every list call; null before the first. */
  lastSuccessAt: string | null;
  /** Age of that cycle in whole seconds; null before the first. */
  freshnessSeconds: number | null;
  /** The gap between the schedule's next two runs. */
  pollIntervalSeconds: number;
  /**
   * Age at which the mirror counts as stale: staleAfterCycles poll intervals, or the time until
   * the staleAfterCycles-th scheduled run after the last success when the schedule pauses.
   */
  staleAfterSeconds: number;
  /** No success yet, or the last one is older than staleAfterSeconds. */
  isStale: boolean;
}

/** What `/readyz` answers. */
export interface Readiness {
  ready: boolean;
  reason: string;
  lastSuccessAt: string | null;
  freshnessSeconds: number | null;
  staleAfterSeconds: number | null;
}

/**
 * The poll interval of a cron pattern: the gap between its next two runs after `fromMs`. For an
 * irregular pattern (working hours only, say) this is the gap that applies now.
 */
export function pollIntervalMs(pattern: string, fromMs: number): number {
  const job = new Cron(pattern, { paused: true });
  try {
    const [first, second] = job.nextRuns(2, new Date(fromMs));
    // A pattern with fewer than two future runs (a fixed date) never goes stale by schedule.
    if (!first || !second) return Number.POSITIVE_INFINITY;
    return second.getTime() - first.getTime();
  } finally {
    job.stop();
  }
}

/**
 * When the `n`-th run of `pattern` after `fromMs` falls (epoch ms, n ≥ 1), or Infinity when the
 * pattern has fewer runs left. Over a pause in the schedule (nights, for a working-hours pattern)
 * this is what "n cycles later" means, where n times the current interval is not.
 */
export function nthRunAfter(pattern: string, fromMs: number, n: number): number {
  const job = new Cron(pattern, { paused: true });
  try {
    const runs = job.nextRuns(n, new Date(fromMs));
    return runs.length < n ? Number.POSITIVE_INFINITY : runs[n - 1]!.getTime();
  } finally {
    job.stop();
  }
}

/** Reads the last success time the poll cycle records in sync_state (null when absent). */
export async function readLastSuccessAt(db: Connection): Promise<string | null> {
  return (await readSyncState(db, LAST_SUCCESS_KEY))?.value ?? null;
}

/** Freshness of `lastSuccessAt` at `nowMs`, against staleAfterCycles intervals of `pollCron`. */
export function assessFreshness({
  lastSuccessAt,
  nowMs,
  pollCron,
  staleAfterCycles,
}: {
  lastSuccessAt: string | null;
  nowMs: number;
  pollCron: string;
  staleAfterCycles: number;
}): Freshness {
  const intervalMs = pollIntervalMs(pollCron, nowMs);
  const successMs = lastSuccessAt === null ? Number.NaN : Date.parse(lastSuccessAt);
  // Stale once staleAfterCycles scheduled cycles have passed without a success: that many
  // intervals on a regular schedule, longer when the schedule pauses (a working-hours pattern is
  // not stale overnight). The sum of intervals stays the floor, so a regular schedule counts
  // from the success itself, not from the run that produced it.
  const staleAfterMs = Math.max(
    intervalMs * staleAfterCycles,
    Number.isFinite(successMs)
      ? nthRunAfter(pollCron, successMs, staleAfterCycles) - successMs
      : Number.NEGATIVE_INFINITY,
  );
  // A clock stepped backwards would give a negative age: count it as just now.
  const ageMs = Number.isFinite(successMs) ? Math.max(0, nowMs - successMs) : null;
  return {
    lastSuccessAt,
    freshnessSeconds: ageMs === null ? null : Math.floor(ageMs / 1000),
    pollIntervalSeconds: intervalMs / 1000,
    staleAfterSeconds: staleAfterMs / 1000,
    isStale: ageMs === null || ageMs > staleAfterMs,
  };
}

/**
 * The readiness check of `/readyz`: ready while the last successful cycle is fresher than
 * staleAfterCycles poll intervals. Read from the database at every call, so it agrees with
 * `transport-sync status` and survives restarts. With polling off or retired there is no cycle to
 * judge: a daemon with a webhook receiver counts as ready, one without can receive nothing and
 * is never ready.
 */
export function createReadiness({
  db,
  now,
  pollCron,
  staleAfterCycles,
  isPollingOn,
  hasWebhooks = false,
}: {
  db: Connection;
  now: () => number;
  pollCron: string;
  staleAfterCycles: number;
  isPollingOn: boolean;
  /** A webhook receiver runs in this daemon. */
  hasWebhooks?: boolean;
}): () => Promise<Readiness> {
  return async () => {
    if (!isPollingOn || (await readPollingRetiredAt(db)) !== null) {
      const why = isPollingOn ? "the service's polling API is retired" : 'polling is off';
      return {
        ready: hasWebhooks,
        reason: hasWebhooks
          ? `${why}: webhooks only; freshness is not tracked`
          : `${why} and no webhook receiver is configured: nothing can bring data in; ${NO_INTAKE_HINT}`,
        lastSuccessAt: null,
        freshnessSeconds: null,
        staleAfterSeconds: null,
      };
    }
    const lastSuccessAt = await readLastSuccessAt(db);
    const freshness = assessFreshness({ lastSuccessAt, nowMs: now(), pollCron, staleAfterCycles });
    const reason =
      freshness.lastSuccessAt === null
        ? 'no poll cycle has completed yet'
        : freshness.isStale
          ? `the last successful cycle is ${freshness.freshnessSeconds} s old (stale after ${freshness.staleAfterSeconds} s)`
          : 'fresh';
    return {
      ready: !freshness.isStale,
      reason,
      lastSuccessAt: freshness.lastSuccessAt,
      freshnessSeconds: freshness.freshnessSeconds,
      staleAfterSeconds: freshness.staleAfterSeconds,
    };
  };
}
