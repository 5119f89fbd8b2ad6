import { hostname } from 'node:os';
import { isProcessAlive } from '../../process.js';
import type { Connection, Sql } from '../sql.js';

/** The counts a run reports in its sync_runs row and its summary log line. */
export interface RunCounts {
  listCalls: number;
  detailCalls: number;
  retries: number;
  requestsSeen: number;
  requestsNew: number;
  requestsChanged: number;
  requestsUnchanged: number;
  requestsUnavailable: number;
  requestsFailed: number;
  requestsQuarantined: number;
  /** Drifted members in the records this run stored (see schema_drift). */
  schemaDrift: number;
}

/** How a run ended. `partial`: some requests failed and are retried next cycle. */
export type RunStatus = 'ok' | 'partial' | 'failed' | 'aborted';

/** Fresh zero counts. */
export function emptyCounts(): RunCounts {
  return {
    listCalls: 0,
    detailCalls: 0,
    retries: 0,
    requestsSeen: 0,
    requestsNew: 0,
    requestsChanged: 0,
    requestsUnchanged: 0,
    requestsUnavailable: 0,
    requestsFailed: 0,
    requestsQuarantined: 0,
    schemaDrift: 0,
  };
}

const FINISH = `UPDATE sync_runs SET finished_at = @finished_at, status = @status, error = @error,
  list_calls = @listCalls, detail_calls = @detailCalls, retries = @retries,
  requests_seen = @requestsSeen, requests_new = @requestsNew,
  requests_changed = @requestsChanged, requests_unchanged = @requestsUnchanged,
  requests_unavailable = @requestsUnavailable, requests_failed = @requestsFailed,
  requests_quarantined = @requestsQuarantined, schema_drift = @schemaDrift
  WHERE run_id = @run_id`;

/** sync_runs bookkeeping: one row per poll cycle, sync, backfill or probe. */
export function createRunStore(sql: Sql) {
  return {
    /** Opens a sync_runs row in state `running` and returns its id. */
    async start(run: {
      kind: string;
      startedAt: string;
      windowFrom?: string;
      windowTo?: string;
    }): Promise<number> {
      const row = await sql.get<{ run_id: number }>(
        `INSERT INTO sync_runs (kind, started_at, status, window_from, window_to, pid, host)
         VALUES (@kind, @started_at, 'running', @window_from, @window_to, @pid, @host)
         RETURNING run_id`,
        {
          kind: run.kind,
          started_at: run.startedAt,
          window_from: run.windowFrom ?? null,
          window_to: run.windowTo ?? null,
          pid: process.pid,
          host: hostname(),
        },
      );
      return row!.run_id;
    },
    /** Closes a run with its status, counts and (log-safe) error text. */
    async finish(
      runId: number,
      end: { finishedAt: string; status: RunStatus; counts: RunCounts; error?: string },
    ): Promise<void> {
      await sql.run(FINISH, {
        run_id: runId,
        finished_at: end.finishedAt,
        status: end.status,
        error: end.error ?? null,
        ...end.counts,
      });
    },
    /**
     * Closes runs left 'running' by a killed process: those whose process is gone from this host,
     * and poll runs started before `pollBefore` (no live cycle is that old; this also covers runs
     * from another host or from before pids were recorded). Returns how many.
     */
    async closeAbandoned(pollBefore: string, at: string): Promise<number> {
      const me = hostname();
      const running = await sql.all<{
        run_id: number;
        kind: string;
        started_at: string;
        pid: number | null;
        host: string | null;
      }>("SELECT run_id, kind, started_at, pid, host FROM sync_runs WHERE status = 'running'");
      let closed = 0;
      for (const run of running) {
        const isGone = run.host === me && run.pid !== null && !isProcessAlive(run.pid);
        const isTooOld = run.kind === 'poll' && run.started_at < pollBefore;
        if (!isGone && !isTooOld) continue;
        closed += await sql.run(
          `UPDATE sync_runs SET status = 'aborted', finished_at = @at,
             error = 'the process ended during the run' WHERE run_id = @run_id AND status = 'running'`,
          { run_id: run.run_id, at },
        );
      }
      return closed;
    },
  };
}

/** The run store's interface. */
export type RunStore = ReturnType<typeof createRunStore>;

/** One sync_runs row as read-only callers (status) see it. */
export interface RecentRun {
  run_id: number;
  kind: string;
  status: string;
  started_at: string;
  finished_at: string | null;
  list_calls: number;
  detail_calls: number;
  retries: number;
  requests_seen: number;
  requests_new: number;
  requests_changed: number;
  requests_unchanged: number;
  requests_unavailable: number;
  requests_failed: number;
  requests_quarantined: number;
  schema_drift: number;
  error: string | null;
}

/**
 * The last `limit` runs, newest first, without writing: none when the table is missing, and a
 * database not yet migrated to schema_drift still reports its runs (with 0 there).
 */
export async function readRecentRuns(db: Connection, limit: number): Promise<RecentRun[]> {
  if (!(await db.hasTable('sync_runs'))) return [];
  const drift = (await db.hasColumn('sync_runs', 'schema_drift'))
    ? 'schema_drift'
    : '0 AS schema_drift';
  return db.read((sql) =>
    sql.all<RecentRun>(
      `SELECT run_id, kind, status, started_at, finished_at, list_calls, detail_calls, retries,
         requests_seen, requests_new, requests_changed, requests_unchanged, requests_unavailable,
         requests_failed, requests_quarantined, ${drift}, error
       FROM sync_runs ORDER BY run_id DESC LIMIT @limit`,
      { limit },
    ),
  );
}
