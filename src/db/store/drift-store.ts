import type { Sql } from '../sql.js';

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

/**
 * The schema_drift table. A missing or retyped member is kept per request; an unknown member per
 * member alone, since a member the service added appears on every record from then on.
 */
export function createDriftStore(sql: Sql, { onNew }: { onNew?: (drift: NewDrift) => void } = {}) {
  return {
    /** Records one record's drift. Returns the drifts never seen before, for the caller to log. */
    async record(
      requestId: string,
      source: string,
      drift: readonly DriftObservation[],
      at: string,
    ): Promise<NewDrift[]> {
      const fresh: NewDrift[] = [];
      for (const d of drift) {
        const scope = d.problem === 'unknown' ? '' : requestId;
        const key = [source, scope, d.member, d.problem].join('|');
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
    },
  };
}

/** The drift store's interface. */
export type DriftStore = ReturnType<typeof createDriftStore>;
