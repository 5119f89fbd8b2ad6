import type { RowsInsert, Sql } from '../sql.js';

/** One drifted member as the store records it (type names only, never a value). */
export interface DriftObservation {
  member: string;
  problem: 'missing' | 'type' | 'unknown';
  expected: string | null;
  received: string | null;
}

/** A drift seen for the first time: the caller logs it once. */
export interface NewDrift extends DriftObservation {
  requestId: string;
  source: string;
}

/** One record's drift, for recordMany: as `record`'s arguments. */
export interface RecordDrift {
  requestId: string;
  source: string;
  drift: readonly DriftObservation[];
  at: string;
}

/** A key's observations in a batch, folded (see recordMany). */
interface FoldedDrift {
  first: NewDrift;
  firstAt: string;
  /** The type the last observation received. */
  received: string | null;
  lastAt: string;
  count: number;
}

/** schema_drift's key: an unknown member is kept per member alone, the others per request. */
const driftKey = (source: string, requestId: string, d: DriftObservation) =>
  [source, d.problem === 'unknown' ? '' : requestId, d.member, d.problem].join('|');

const DRIFT_COLUMNS = [
  'drift_key',
  'request_id',
  'source',
  'member',
  'problem',
  'expected',
  'received',
  'first_seen_at',
  'last_seen_at',
  'count',
] as const;

/**
 * recordMany's rows (PostgreSQL): each key once, with how often the batch saw it; what it
 * inserted comes back, to be logged.
 */
const DRIFT_UPSERT: RowsInsert = {
  table: 'schema_drift',
  columns: DRIFT_COLUMNS,
  onConflict: `ON CONFLICT (drift_key) DO UPDATE SET last_seen_at = excluded.last_seen_at,
    count = schema_drift.count + excluded.count, received = excluded.received`,
  returning: 'drift_key, (xmax = 0) AS is_inserted',
};

/**
 * The schema_drift table. A missing or retyped member is kept per request; an unknown member per
 * member alone, since a member the service added appears on every record from then on.
 */
export function createDriftStore(sql: Sql, { onNew }: { onNew?: (drift: NewDrift) => void } = {}) {
  /** Records one record's drift. Returns the drifts never seen before, for the caller to log. */
  async function record(
    requestId: string,
    source: string,
    drift: readonly DriftObservation[],
    at: string,
  ): Promise<NewDrift[]> {
    const fresh: NewDrift[] = [];
    for (const d of drift) {
      const key = driftKey(source, requestId, d);
      const touched = await sql.run(
        `UPDATE schema_drift SET last_seen_at = @at, count = count + 1, received = @received
         WHERE drift_key = @drift_key`,
        { drift_key: key, at, received: d.received },
      );
      if (touched > 0) continue;
      await sql.run(
        `INSERT INTO schema_drift (drift_key, request_id, source, member, problem, expected,
           received, first_seen_at, last_seen_at, count)
         VALUES (@drift_key, @request_id, @source, @member, @problem, @expected, @received,
           @at, @at, 1)`,
        { drift_key: key, request_id: requestId, source, ...d, at },
      );
      fresh.push({ ...d, requestId, source });
      onNew?.({ ...d, requestId, source });
    }
    return fresh;
  }

  return {
    record,
    /**
     * `record` for several records, in their order, with the same outcome. On PostgreSQL the rows
     * go several to a statement (postgres/insert-values.ts), the batch's observations folded per
     * key first (a key's first observation is the row inserted and its first time; its last one
     * the type received and the last time; the count goes up by how many), as a statement may
     * not update one row twice. A webhook batch of 100 events wrote some 110 drift statements,
     * one round trip each.
     */
    async recordMany(records: readonly RecordDrift[]): Promise<NewDrift[]> {
      if (sql.dialect.engine !== 'postgres') {
        const fresh: NewDrift[] = [];
        for (const { requestId, source, drift, at } of records)
          fresh.push(...(await record(requestId, source, drift, at)));
        return fresh;
      }
      const folded = new Map<string, FoldedDrift>();
      for (const { requestId, source, drift, at } of records) {
        for (const d of drift) {
          const key = driftKey(source, requestId, d);
          const seen = folded.get(key);
          if (seen) {
            seen.count += 1;
            seen.received = d.received;
            seen.lastAt = at;
          } else {
            const first = { ...d, requestId, source };
            folded.set(key, { first, firstAt: at, received: d.received, lastAt: at, count: 1 });
          }
        }
      }
      if (folded.size === 0) return [];
      const rows = [...folded].map(([key, { first, firstAt, received, lastAt, count }]) => ({
        drift_key: key,
        request_id: first.requestId,
        source: first.source,
        member: first.member,
        problem: first.problem,
        expected: first.expected,
        received,
        first_seen_at: firstAt,
        last_seen_at: lastAt,
        count,
      }));
      const written = await sql.insertRows<{ drift_key: string; is_inserted: boolean | number }>(
        DRIFT_UPSERT,
        rows,
      );
      const inserted = new Set(written.filter((w) => w.is_inserted).map((w) => w.drift_key));
      const fresh = [...folded].flatMap(([key, { first }]) => (inserted.has(key) ? [first] : []));
      for (const drift of fresh) onNew?.(drift);
      return fresh;
    },
  };
}

/** The drift store's interface. */
export type DriftStore = ReturnType<typeof createDriftStore>;
