import { statSync } from 'node:fs';
import type { Connection, Sql } from '../sql.js';

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

const TABLES = [
  'requests',
  'quarantine',
  'schema_drift',
  'webhook_events',
  'outbox_locations',
  'outbox_actions',
] as const;

async function readSchemaDrift(sql: Sql): Promise<SchemaDriftFacts> {
  const facts: SchemaDriftFacts = {
    rows: 0,
    members: 0,
    missing: 0,
    type: 0,
    unknown: 0,
    last_seen_at: null,
  };
  const byProblem = await sql.all<{ problem: string; n: number }>(
    'SELECT problem, count(*) AS n FROM schema_drift GROUP BY problem',
  );
  for (const { problem, n } of byProblem) {
    facts.rows += n;
    if (problem === 'missing' || problem === 'type' || problem === 'unknown') facts[problem] = n;
  }
  const summary = await sql.get<{ members: number; last: string | null }>(
    'SELECT count(DISTINCT member) AS members, max(last_seen_at) AS last FROM schema_drift',
  );
  facts.members = summary!.members;
  facts.last_seen_at = summary!.last;
  return facts;
}

/** Reads the facts in one snapshot, so the counts belong to one moment. */
export async function readMirrorFacts(db: Connection): Promise<MirrorFacts> {
  const tables = new Set<string>();
  for (const table of TABLES) if (await db.hasTable(table)) tables.add(table);
  return db.read(
    async (sql) => {
      const count = async (table: string, where = '1 = 1') =>
        tables.has(table)
          ? (await sql.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`))!.n
          : 0;
      const requestsByState: Record<string, number> = {};
      if (tables.has('requests')) {
        const rows = await sql.all<{ state: string; n: number }>(
          `SELECT coalesce(list_state, 'unknown') AS state, count(*) AS n FROM requests
           WHERE unavailable_at IS NULL GROUP BY 1 ORDER BY 1`,
        );
        for (const row of rows) requestsByState[row.state] = row.n;
      }
      const outboxOf = async (table: string) => ({
        pending: await count(table, "status = 'pending'"),
        failed: await count(table, "status = 'failed'"),
      });
      return {
        requestsByState,
        unavailable: await count('requests', 'unavailable_at IS NOT NULL'),
        quarantined: await count('quarantine'),
        schemaDrift: tables.has('schema_drift')
          ? await readSchemaDrift(sql)
          : { rows: 0, members: 0, missing: 0, type: 0, unknown: 0, last_seen_at: null },
        webhookEvents: {
          received: await count('webhook_events'),
          pending: await count('webhook_events', 'processed_at IS NULL'),
          failed: await count('webhook_events', 'processed_at IS NOT NULL AND error IS NOT NULL'),
        },
        outbox: {
          locations: await outboxOf('outbox_locations'),
          actions: await outboxOf('outbox_actions'),
        },
      };
    },
    { isSnapshot: true },
  );
}

/** When the last webhook delivery was received, or null (none, or no table yet). */
export async function readLastDeliveryAt(db: Connection): Promise<string | null> {
  if (!(await db.hasTable('webhook_events'))) return null;
  const row = await db.read((sql) =>
    sql.get<{ at: string | null }>('SELECT max(received_at) AS at FROM webhook_events'),
  );
  return row?.at ?? null;
}

/**
 * The database's size in bytes: on SQLite its file and its write-ahead log (0 when absent), on
 * PostgreSQL what the server reports for the database (its WAL is the server's, not ours).
 */
export async function databaseSize(
  db: (Connection & { engine: 'sqlite'; path: string }) | (Connection & { engine: 'postgres' }),
): Promise<{ database: number; wal: number }> {
  if (db.engine === 'postgres') {
    const row = await db.read((sql) =>
      sql.get<{ n: number }>('SELECT pg_database_size(current_database()) AS n'),
    );
    return { database: row?.n ?? 0, wal: 0 };
  }
  const size = (file: string) => {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  };
  return { database: size(db.path), wal: size(`${db.path}-wal`) };
}
