import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';

/**
 * Counts an operator watches, read with plain SQL from the mirror. Shared by `status` and the
 * metrics gauges so both say the same. Ids and counts only: never a patient field. A table a
 * not-yet-migrated database lacks counts as empty rather than failing the whole report.
 */
export interface MirrorFacts {
  /** Available requests by their list state (null state as `unknown`). */
  requestsByState: Record<string, number>;
  /** Requests the service stopped showing us (unavailable_at set). */
  unavailable: number;
  quarantined: number;
  /** schema_drift rows: members seen differing from the documented shape, by problem. */
  schemaDrift: SchemaDriftFacts;
  webhookEvents: { received: number; pending: number; failed: number };
  outbox: {
    locations: { pending: number; failed: number };
    actions: { pending: number; failed: number };
  };
}

/** What schema_drift holds: rows by problem, how many members, and when drift was last seen. */
export interface SchemaDriftFacts {
  rows: number;
  members: number;
  missing: number;
  type: number;
  unknown: number;
  last_seen_at: string | null;
}

function readSchemaDrift(sqlite: Database.Database, tables: ReadonlySet<string>): SchemaDriftFacts {
  const facts: SchemaDriftFacts = {
    rows: 0,
    members: 0,
    missing: 0,
    type: 0,
    unknown: 0,
    last_seen_at: null,
  };
  if (!tables.has('schema_drift')) return facts;
  const byProblem = sqlite
    .prepare('SELECT problem, count(*) AS n FROM schema_drift GROUP BY problem')
    .all() as { problem: string; n: number }[];
  for (const { problem, n } of byProblem) {
    facts.rows += n;
    if (problem === 'missing' || problem === 'type' || problem === 'unknown') facts[problem] = n;
  }
  const summary = sqlite
    .prepare(
      'SELECT count(DISTINCT member) AS members, max(last_seen_at) AS last FROM schema_drift',
    )
    .get() as { members: number; last: string | null };
  facts.members = summary.members;
  facts.last_seen_at = summary.last;
  return facts;
}

/** Reads the facts in one read transaction, so the counts belong to one moment. */
export function readMirrorFacts(sqlite: Database.Database): MirrorFacts {
  return sqlite.transaction(() => {
    const tables = new Set(
      (
        sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
          name: string;
        }[]
      ).map((row) => row.name),
    );
    const count = (table: string, where = '1') =>
      tables.has(table)
        ? (
            sqlite.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get() as {
              n: number;
            }
          ).n
        : 0;
    const requestsByState: Record<string, number> = {};
    if (tables.has('requests')) {
      const rows = sqlite
        .prepare(
          `SELECT coalesce(list_state, 'unknown') AS state, count(*) AS n FROM requests
           WHERE unavailable_at IS NULL GROUP BY 1 ORDER BY 1`,
        )
        .all() as { state: string; n: number }[];
      for (const row of rows) requestsByState[row.state] = row.n;
    }
    const outboxOf = (table: string) => ({
      pending: count(table, "status = 'pending'"),
      failed: count(table, "status = 'failed'"),
    });
    return {
      requestsByState,
      unavailable: count('requests', 'unavailable_at IS NOT NULL'),
      quarantined: count('quarantine'),
      schemaDrift: readSchemaDrift(sqlite, tables),
      webhookEvents: {
        received: count('webhook_events'),
        pending: count('webhook_events', 'processed_at IS NULL'),
        failed: count('webhook_events', 'processed_at IS NOT NULL AND error IS NOT NULL'),
      },
      outbox: { locations: outboxOf('outbox_locations'), actions: outboxOf('outbox_actions') },
    };
  })();
}

/** Sizes of the database file and its write-ahead log, in bytes (0 when absent). */
export function databaseBytes(path: string): { database: number; wal: number } {
  const size = (file: string) => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
  return { database: size(path), wal: size(`${path}-wal`) };
}
