import {
  PROFILE_COLUMNS,
  rowMaker,
  type EnvelopeKind,
  type EventRow,
  type ProfileRow,
} from '../schema/index.js';
import {
  planProfileChanges,
  type ProfileObservation,
  type StoredProfile,
} from '../../mirror/profile-plan.js';
import { idsParam as idsParamOf, isAmongIds } from '../set-sql.js';
import type { ChangeLog } from './change-log.js';
import {
  insertOneSql,
  jsonWithUnstorableSpelledOut,
  unstorableTextIn,
  type RowsInsert,
  type Sql,
  type UnstorableText,
} from '../sql.js';

/** A later event about a request, already applied: with data, or marking it unavailable. */
export interface LaterEvent {
  eventId: string;
  /** Canonical ISO. */
  eventTimestamp: string;
  hasData: boolean;
}

/** laterApplied's row. */
interface LaterRow {
  event_id: string;
  event_timestamp: string;
  has_data: number;
}

const laterEventOf = (row: LaterRow): LaterEvent => ({
  eventId: row.event_id,
  eventTimestamp: row.event_timestamp,
  hasData: Number(row.has_data) === 1,
});

/** A stored event waiting to be applied (its payload is read apart: see `payloads`). */
export interface PendingEvent {
  event_id: string;
  envelope: EnvelopeKind;
  attempts: number;
}

const PROFILE_WRITE = [...PROFILE_COLUMNS, 'event_id', 'updated_at'];
const newProfileWrite = rowMaker<Record<string, unknown>>(PROFILE_WRITE);
/** The row that writes a profile, made in V8's fast layout (see rowMaker). */
const profileWriteRow = ({ profile, eventId, updatedAt }: ProfileObservation) =>
  Object.assign(newProfileWrite(), profile, { event_id: eventId, updated_at: updatedAt });

/** A profile, unless a later event (by event_id) already wrote the request's. */
const PROFILE_UPSERT: RowsInsert = {
  table: 'request_profiles',
  columns: PROFILE_WRITE,
  onConflict: `ON CONFLICT (request_id) DO UPDATE SET
  ${PROFILE_WRITE.slice(1)
    .map((c) => `${c} = excluded.${c}`)
    .join(', ')}
  WHERE excluded.event_id >= request_profiles.event_id`,
};
const UPSERT_PROFILE = insertOneSql(PROFILE_UPSERT);

/** A profile to write, with the event that carried it. */
export type ProfileWrite = ProfileObservation;

export function createEventStore(sql: Sql, changes: ChangeLog) {
  /**
   * A delivery's row: unprocessed, or, where its payload holds text the engine cannot store
   * (NUL, half a surrogate pair), with it spelled out and processed at once with the reason.
   */
  const storableRow = (event: EventRow) => {
    const unstorable = sql.dialect.isAnyJsonStorable
      ? undefined
      : unstorableTextIn(event.payload_json);
    return unstorable
      ? withUnstorableSpelledOut(event, unstorable)
      : { ...event, processed_at: null, error: null };
  };
  // Only events that said something about the request count: data, or "unavailable". A later
  // event with data comes first; else the earliest "unavailable", when the request became so.
  const hasData = sql.dialect.jsonMemberIsObject('payload_json', 'data');
  const laterApplied = `SELECT event_id, event_timestamp,
      CASE WHEN request_status = 'UNAVAILABLE' THEN 0 ELSE 1 END AS has_data
    FROM webhook_events
    WHERE service_request_id = @request_id AND envelope = 'v2' AND event_id > @event_id
      AND processed_at IS NOT NULL AND error IS NULL
      AND (request_status = 'UNAVAILABLE' OR ${hasData})
    ORDER BY has_data DESC, event_id
    LIMIT 1`;
  // laterApplied for a set of events in one statement (PostgreSQL): the same lookup per event,
  // through the request index. A plain join is planned as a scan of every applied event's
  // payload (40 ms a batch at 10,000 events, measured).
  const laterAppliedMany = `SELECT a.event_id AS asked, l.*
    FROM json_to_recordset(@events::json) AS a(request_id text, event_id text)
    CROSS JOIN LATERAL (${laterApplied
      .replace('@request_id', 'a.request_id')
      .replace('@event_id', 'a.event_id')}) AS l`;
  const markProcessedMany = `UPDATE webhook_events
    SET processed_at = @at, error = NULL, attempts = attempts + 1
    WHERE ${isAmongIds(sql.dialect, 'event_id')}`;
  const idsParam = (ids: readonly string[]) => idsParamOf(sql.dialect, ids);
  const selectPayloads = `SELECT event_id, payload_json FROM webhook_events
    WHERE ${isAmongIds(sql.dialect, 'event_id')}`;
  const selectProfiles = `SELECT ${PROFILE_WRITE.join(', ')} FROM request_profiles
    WHERE ${isAmongIds(sql.dialect, 'request_id')}`;
  /** The stored profiles of the writes' requests, and the changes the writes make to them. */
  async function logProfileChanges(writes: readonly ProfileWrite[]): Promise<void> {
    const stored = await sql.all<StoredProfile>(
      selectProfiles,
      idsParam(writes.map((write) => write.profile.request_id)),
    );
    await changes.addAll(
      planProfileChanges(writes, new Map(stored.map((row) => [String(row.request_id), row]))),
    );
  }
  const findLater = async (requestId: string, eventId: string) => {
    const row = await sql.get<LaterRow>(laterApplied, { request_id: requestId, event_id: eventId });
    return row && laterEventOf(row);
  };
  async function insert(event: EventRow): Promise<boolean> {
    const changes = await sql.run(INSERT_EVENT_ROW, storableRow(event));
    return changes > 0;
  }

  return {
    /**
     * Stores a delivery; false when its event_id is already stored (a retried delivery). A
     * payload holding text the engine cannot store (NUL, half a surrogate pair) is kept with it
     * spelled out and marked processed with the reason: applying it would store text that reads
     * differently, and refusing it would lose it after the service's last retry.
     */
    insert,
    /**
     * `insert` for the deliveries of one group commit, in their order: which were new. Several to
     * a statement (Sql.insertRows), which on PostgreSQL spares a round trip each; of an event_id
     * twice, the first is new.
     */
    async insertMany(events: readonly EventRow[]): Promise<boolean[]> {
      if (events.length === 1) return [await insert(events[0]!)];
      if (events.length === 0) return [];
      const rows = events.map(storableRow);
      const inserted = await sql.insertRows<{ event_id: string }>(EVENT_INSERT, rows);
      const fresh = new Set(inserted.map((row) => row.event_id));
      return rows.map((row) => fresh.delete(row.event_id));
    },
    /** Up to `limit` unprocessed events after `after`, in event_id order. */
    pending(after: string, limit: number): Promise<PendingEvent[]> {
      return sql.all<PendingEvent>(
        `SELECT event_id, envelope, attempts FROM webhook_events
         WHERE processed_at IS NULL AND event_id > @after ORDER BY event_id LIMIT @limit`,
        { after, limit },
      );
    },
    /** The stored payloads (JSON text) of these events, by event_id, in one statement. */
    async payloads(eventIds: readonly string[]): Promise<Map<string, string>> {
      if (eventIds.length === 0) return new Map();
      const rows = await sql.all<{ event_id: string; payload_json: string }>(
        selectPayloads,
        idsParam(eventIds),
      );
      return new Map(rows.map((row) => [row.event_id, row.payload_json]));
    },
    /** Marks an event done: applied, skipped, or (with `error`) failed for good. */
    async markProcessed(eventId: string, at: string, error: string | null = null): Promise<void> {
      await sql.run(
        `UPDATE webhook_events SET processed_at = @at, error = @error, attempts = attempts + 1
         WHERE event_id = @event_id`,
        { event_id: eventId, at, error },
      );
    },
    /** markProcessed (without an error) for a set of events, in one statement. */
    async markProcessedMany(eventIds: readonly string[], at: string): Promise<void> {
      if (eventIds.length > 0) await sql.run(markProcessedMany, { ...idsParam(eventIds), at });
    },
    /** Records a failed attempt; the event stays pending and is tried again. */
    async markFailed(eventId: string, error: string): Promise<void> {
      await sql.run(
        'UPDATE webhook_events SET error = @error, attempts = attempts + 1 WHERE event_id = @event_id',
        { event_id: eventId, error },
      );
    },
    /**
     * A later v2 event about the request that is already applied, if any: one with data if there
     * is one, else the earliest that marked it unavailable.
     */
    laterApplied: findLater,
    /**
     * laterApplied for a set of events, by event_id (those that have one): one statement on
     * PostgreSQL, a statement each on SQLite.
     */
    async laterAppliedMany(
      events: readonly { requestId: string; eventId: string }[],
    ): Promise<Map<string, LaterEvent>> {
      const later = new Map<string, LaterEvent>();
      if (sql.dialect.engine === 'sqlite') {
        for (const { requestId, eventId } of events) {
          const found = await findLater(requestId, eventId);
          if (found) later.set(eventId, found);
        }
        return later;
      }
      if (events.length === 0) return later;
      const rows = await sql.all<LaterRow & { asked: string }>(laterAppliedMany, {
        events: JSON.stringify(
          events.map((e) => ({ request_id: e.requestId, event_id: e.eventId })),
        ),
      });
      for (const row of rows) later.set(row.asked, laterEventOf(row));
      return later;
    },
    /**
     * writeProfile for profiles of distinct requests, several rows to a statement, after one
     * that reads the stored profiles for the change log (see mirror/profile-plan.ts).
     */
    async writeProfiles(profiles: readonly ProfileWrite[]): Promise<void> {
      if (profiles.length === 0) return;
      await logProfileChanges(profiles);
      await sql.insertRows(PROFILE_UPSERT, profiles.map(profileWriteRow));
    },
    /** Writes a profile unless a later event already wrote it; true when written. */
    async writeProfile(profile: ProfileRow, eventId: string, updatedAt: string): Promise<boolean> {
      await logProfileChanges([{ profile, eventId, updatedAt }]);
      const written = await sql.run(
        UPSERT_PROFILE,
        profileWriteRow({ profile, eventId, updatedAt }),
      );
      return written > 0;
    },
    /** Events not yet processed. */
    async pendingCount(): Promise<number> {
      return (await sql.get<{ n: number }>(
        'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NULL',
      ))!.n;
    },
  };
}

/** The webhook event store's interface. */
export type EventStore = ReturnType<typeof createEventStore>;

/** Why a delivery holding NUL was not applied (webhook_events.error). */
export const NUL_NOT_APPLIED =
  'not applied: the payload holds a NUL character (U+0000), which PostgreSQL cannot store';

/** Why a delivery holding half a surrogate pair was not applied (webhook_events.error). */
export const SURROGATE_NOT_APPLIED =
  'not applied: the payload holds half of a UTF-16 surrogate pair (a character cut in two), which PostgreSQL cannot store';

/** webhook_events' columns as a delivery fills them. */
const EVENT_COLUMNS = [
  'event_id',
  'envelope',
  'event_timestamp',
  'service_request_id',
  'request_status',
  'action',
  'event_type',
  'payload_json',
  'received_at',
  'processed_at',
  'error',
] as const;

/** A delivery's row; one stored already is left as it is. */
const EVENT_ROWS: RowsInsert = {
  table: 'webhook_events',
  columns: EVENT_COLUMNS,
  onConflict: 'ON CONFLICT (event_id) DO NOTHING',
};

/** insert's statement. */
const INSERT_EVENT_ROW = insertOneSql(EVENT_ROWS);

/** insertMany's rows (PostgreSQL): the ids it inserted come back. */
const EVENT_INSERT: RowsInsert = { ...EVENT_ROWS, returning: 'event_id' };

/** A NUL, or half of a surrogate pair without its other half, in text. */
const UNSTORABLE_CHARACTER =
  // eslint-disable-next-line no-control-regex -- a NUL is what it looks for
  /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * The row with what PostgreSQL cannot store spelled out (NUL and half a pair as their escapes, in
 * every column), processed at once with the reason. Half a pair would otherwise reach the server
 * as U+FFFD, the text altered without a word.
 */
function withUnstorableSpelledOut(event: EventRow, unstorable: UnstorableText) {
  const spell = (value: string | null) =>
    value === null
      ? null
      : value.replace(
          UNSTORABLE_CHARACTER,
          (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
        );
  return {
    ...event,
    event_id: spell(event.event_id)!,
    service_request_id: spell(event.service_request_id),
    request_status: spell(event.request_status),
    action: spell(event.action),
    event_type: spell(event.event_type),
    payload_json: jsonWithUnstorableSpelledOut(event.payload_json),
    processed_at: event.received_at,
    error: unstorable === 'nul' ? NUL_NOT_APPLIED : SURROGATE_NOT_APPLIED,
  };
}
