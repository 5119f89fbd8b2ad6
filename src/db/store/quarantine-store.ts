import { createHash } from 'node:crypto';
import { jsonWithUnstorableSpelledOut, type Sql } from '../sql.js';

/** A record the service sent that failed validation. */
export interface QuarantinedRecord {
  requestId: string | null;
  /** Names the request and the member, never the offending value. */
  reason: string;
  raw: unknown;
}

/**
 * Malformed records are kept apart, never stored wrong: each stays here (first and last seen,
 * times seen) until a later cycle receives it well-formed and the store clears it.
 */
export function createQuarantineStore(sql: Sql) {
  /** Forgets a request's quarantined record once a well-formed one is stored. */
  const clear = async (requestId: string): Promise<void> => {
    await sql.run('DELETE FROM quarantine WHERE request_id = @id', { id: requestId });
  };
  return {
    /** Records (or re-records) a malformed record. */
    async add(record: QuarantinedRecord, source: string, at: string): Promise<void> {
      const json = safeJson(record.raw);
      // A copy for people to read: what the engine cannot store is spelled out.
      const rawPayload = sql.dialect.isAnyJsonStorable ? json : jsonWithUnstorableSpelledOut(json);
      await sql.run(
        `INSERT INTO quarantine (record_key, request_id, source, reason, raw_payload,
           first_seen_at, last_seen_at, seen_count)
         VALUES (@record_key, @request_id, @source, @reason, @raw_payload, @at, @at, 1)
         ON CONFLICT (record_key) DO UPDATE SET reason = excluded.reason, source = excluded.source,
           raw_payload = excluded.raw_payload, last_seen_at = excluded.last_seen_at,
           seen_count = quarantine.seen_count + 1`,
        {
          record_key:
            record.requestId ??
            `unknown:${createHash('sha256').update(rawPayload).digest('hex').slice(0, 16)}`,
          request_id: record.requestId,
          source,
          reason: record.reason,
          raw_payload: rawPayload,
          at,
        },
      );
    },
    clear,
    /** clear for many requests, in one statement (the ids as an array, or JSON text). */
    async clearMany(requestIds: readonly string[]): Promise<void> {
      if (requestIds.length <= 1) {
        if (requestIds[0] !== undefined) await clear(requestIds[0]);
        return;
      }
      const isPostgres = sql.dialect.engine === 'postgres';
      await sql.run(
        `DELETE FROM quarantine WHERE request_id IN (${
          isPostgres ? 'SELECT unnest(@ids::text[])' : 'SELECT value FROM json_each(@ids)'
        })`,
        { ids: isPostgres ? requestIds : JSON.stringify(requestIds) },
      );
    },
    async size(): Promise<number> {
      return (await sql.get<{ n: number }>('SELECT count(*) AS n FROM quarantine'))!.n;
    },
  };
}

/** The quarantine store's interface. */
export type QuarantineStore = ReturnType<typeof createQuarantineStore>;

/** The record as JSON; what JSON cannot hold (a cycle, a bigint) as a JSON string of its text. */
function safeJson(raw: unknown): string {
  try {
    return JSON.stringify(raw) ?? 'null';
  } catch {
    return JSON.stringify(String(raw));
  }
}
