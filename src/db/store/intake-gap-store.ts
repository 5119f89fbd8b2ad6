import {
  isAtRisk,
  parsePollCoverage,
  POLL_COVERAGE_KEY,
  type AtRiskFacts,
} from '../../mirror/intake-risk.js';
import type { IntakeGapRow } from '../schema/index.js';
import type { Connection, Dialect, Sql } from '../sql.js';

export type { IntakeGapRow };

/**
 * The facts of the requests a gap from `since` may have put at risk, in one statement: the open
 * ones (awaiting or accepted, available) with their pickup (agreed, else requested) after
 * `since`, each with what the mirror read of it from the service, and the last complete poll's
 * coverage (the same value on every row). mirror/intake-risk.ts decides which are still at risk.
 * An event counts when it carried the record (v2.0 data, or UNAVAILABLE) or, for v1.0, once
 * the detail it cued was fetched; never one that failed to apply.
 */
const atRiskFacts = (dialect: Dialect) => `
  SELECT r.request_id, r.list_state, r.unavailable_at, r.event_dt_utc, r.read_at,
    coalesce(r.transport_agreed_for_time, r.transport_pickup_time) AS pickup_at,
    (SELECT max(e.received_at) FROM webhook_events e
      WHERE e.service_request_id = r.request_id AND e.error IS NULL
        AND ((e.envelope = 'v2' AND (e.request_status = 'UNAVAILABLE'
                OR ${dialect.jsonMemberIsObject('e.payload_json', 'data')}))
          OR (e.envelope = 'v1' AND e.processed_at IS NOT NULL))) AS record_event_at,
    (SELECT q.last_seen_at FROM quarantine q WHERE q.record_key = r.request_id) AS quarantined_at,
    s.value AS poll_coverage
  FROM requests r LEFT JOIN sync_state s ON s.key = @coverage_key
  WHERE r.unavailable_at IS NULL AND r.list_state IN ('awaiting', 'accepted')
    AND coalesce(r.transport_agreed_for_time, r.transport_pickup_time) > @since
  ORDER BY coalesce(r.transport_agreed_for_time, r.transport_pickup_time), r.request_id`;

/** Ids of the requests still at risk from a gap from `since` to `ended`, by pickup. */
async function requestsAtRisk(sql: Sql, since: string, ended: string): Promise<string[]> {
  const rows = await sql.all<AtRiskFacts & { poll_coverage: string | null }>(
    atRiskFacts(sql.dialect),
    { since, coverage_key: POLL_COVERAGE_KEY },
  );
  const coverage = parsePollCoverage(rows[0]?.poll_coverage);
  const gap = { started_at: since, ended_at: ended };
  return rows.filter((row) => isAtRisk(row, gap, coverage)).map((row) => row.request_id);
}

/** The intake_gaps table and the requests a gap puts at risk. */
export function createIntakeGapStore(sql: Sql) {
  return {
    /** Records a gap; returns its id. */
    async add(gap: Omit<IntakeGapRow, 'gap_id' | 'reviewed_at'>): Promise<number> {
      const row = await sql.get<{ gap_id: number }>(
        `INSERT INTO intake_gaps (started_at, ended_at, seconds, requests_at_risk, reason, is_alarmed)
         VALUES (@started_at, @ended_at, @seconds, @requests_at_risk, @reason, @is_alarmed)
         RETURNING gap_id`,
        gap,
      );
      return row!.gap_id;
    },
    /** Ids of the requests at risk from a gap from `since` to `ended` (canonical ISO). */
    requestsAtRisk: (since: string, ended: string) => requestsAtRisk(sql, since, ended),
    /** Marks every alarmed gap reviewed; returns how many were. */
    acknowledge: (at: string) =>
      sql.run('UPDATE intake_gaps SET reviewed_at = @at WHERE is_alarmed AND reviewed_at IS NULL', {
        at,
      }),
  };
}

/** The intake gap store's interface. */
export type IntakeGapStore = ReturnType<typeof createIntakeGapStore>;

/** The last gaps, newest first, and how many alarmed ones are unreviewed (read-only, for status). */
export async function readIntakeGaps(
  db: Connection,
  limit = 5,
): Promise<{ unreviewed: number; last: IntakeGapRow[] }> {
  if (!(await db.hasTable('intake_gaps'))) return { unreviewed: 0, last: [] };
  return db.read(async (sql) => {
    const unreviewed = await sql.get<{ n: number }>(
      'SELECT count(*) AS n FROM intake_gaps WHERE is_alarmed AND reviewed_at IS NULL',
    );
    const last = await sql.all<IntakeGapRow>(
      'SELECT * FROM intake_gaps ORDER BY gap_id DESC LIMIT @limit',
      { limit },
    );
    return { unreviewed: unreviewed!.n, last };
  });
}

/** Requests at risk from a gap from `since` to `ended`, read-only (status). */
export function readRequestsAtRisk(db: Connection, since: string, ended: string) {
  return db.read((sql) => requestsAtRisk(sql, since, ended));
}

/** Intake gaps by kind (read-only, for metrics); none when the table does not exist yet. */
export async function countIntakeGaps(
  db: Connection,
): Promise<{ unreviewed: number; alarmed: number; quiet: number }> {
  if (!(await db.hasTable('intake_gaps'))) return { unreviewed: 0, alarmed: 0, quiet: 0 };
  const row = await db.read((sql) =>
    sql.get<{ unreviewed: number; alarmed: number; quiet: number }>(
      `SELECT
         coalesce(sum(CASE WHEN is_alarmed AND reviewed_at IS NULL THEN 1 ELSE 0 END), 0) AS unreviewed,
         coalesce(sum(CASE WHEN is_alarmed THEN 1 ELSE 0 END), 0) AS alarmed,
         coalesce(sum(CASE WHEN is_alarmed THEN 0 ELSE 1 END), 0) AS quiet
       FROM intake_gaps`,
    ),
  );
  return row!;
}
