import {
  CONTENT_COLUMNS,
  type AccountRow,
  type FacilityRow,
  type FieldRow,
  type LocationRow,
  type RequestContent,
} from '../schema/index.js';
import { isSettled } from '../settled.js';
import { jsonHasNul, type Sql } from '../sql.js';
import { changedRoles, diffColumns, pick, requestSql, type StoredRow } from './request-sql.js';
import type { WrittenCache } from './written-cache.js';

/** How a write went: a new request, a change, nothing new, or older than what is stored. */
export type WriteOutcome = 'new' | 'changed' | 'unchanged' | 'stale';

/** Where a write came from; recorded in requests.source and request_changes.source. */
export type WriteSource = 'poll' | 'backfill' | 'webhook' | 'action';

/** Everything one detail record becomes: the rows of the request tables. */
export interface NormalizedRequest {
  content: RequestContent;
  locations: LocationRow[];
  fields: FieldRow[];
  account: AccountRow | null;
  facility: FacilityRow | null;
  contentHash: string;
}

/** One observation of a request, ready to store. */
export interface RequestWrite {
  normalized: NormalizedRequest;
  /** The record exactly as received. */
  rawJson: string;
  source: WriteSource;
  /** When this observation was made (canonical ISO); orders writes that lack last_updated. */
  observedAt: string;
  /** When the service read the record, on its clock (canonical ISO; default observedAt). */
  readAt?: string;
}

/**
 * An observation that carries only some of the content columns: a webhook's data object. It has
 * no last_updated, so only the time it was made orders it against what is stored.
 */
export interface PartialRequestWrite {
  /** The row's content; columns in `unknownColumns` are ignored, a null list_state is unknown. */
  content: RequestContent;
  /** Columns the observation does not carry: the stored values stay. */
  unknownColumns: readonly (keyof RequestContent)[];
  /** Locations by role (ids unknown); a role missing here is removed. */
  locations: LocationRow[];
  /** The account's name as the observation shows it; its other columns stay as stored. */
  account: { account_id: string; name: string | null } | null;
  rawJson: string;
  source: WriteSource;
  observedAt: string;
}

/** The stored columns the poll compares a list item with. */
export interface StoredSummary {
  request_id: string;
  list_state: string | null;
  event_dt_utc: string | null;
  last_updated_timestamp_utc: string | null;
  unavailable_at: string | null;
  read_at: string | null;
}

/** Values kept from the stored row when the observation does not carry them. */
const KEPT_WHEN_UNKNOWN = [
  'list_state',
  'created_timestamp_utc',
  'last_updated_timestamp_utc',
] as const;

/**
 * Reads and writes of the requests table and its child rows, on one transaction's `sql`.
 * `written` is the running transaction's view of the accounts and facilities already stored.
 */
export function createRequestStore(sql: Sql, written: () => WrittenCache) {
  const q = requestSql(sql.dialect);
  // SQLite's write transaction shuts out every other writer, so a request absent when read is
  // still absent, without child rows (they go with their request: ON DELETE CASCADE), and the
  // deletes that replace them can be skipped. On PostgreSQL another transaction (the applier
  // beside a poll) may store the request after the read: its child rows must still be replaced.
  const hasWriterToItself = sql.dialect.engine === 'sqlite';
  const selectRow = (id: string) => sql.get<StoredRow>(q.selectRow, { id });

  /** Upserts a shared row (an account, a facility) unless it is known stored so. */
  async function writeShared(key: string, statement: string, row: object, at: string) {
    const value = JSON.stringify(row);
    if (written().get(key) === value) return;
    await sql.run(statement, { ...row, updated_at: at });
    written().set(key, value);
  }
  const writeAccount = (account: AccountRow, at: string) =>
    writeShared(`account:${account.account_id}`, q.upsertAccount, account, at);
  const writeFacility = (facility: FacilityRow, at: string) =>
    writeShared(`facility:${facility.facility_id}`, q.upsertFacility, facility, at);

  async function insertChange(change: {
    request_id: string;
    observed_at: string;
    kind: string;
    source: string;
    changed_columns: string;
    old_state: string | null;
    new_state: string | null;
    old_values_json: string | null;
    new_values_json: string | null;
  }): Promise<void> {
    await sql.run(q.insertChange, change);
  }

  /** Stores one observation. */
  async function write(observation: RequestWrite): Promise<WriteOutcome> {
    const { normalized, rawJson, source, observedAt } = observation;
    const readAt = observation.readAt ?? observedAt;
    const incoming = normalized.content;
    const stored = await selectRow(incoming.request_id);
    if (stored && isOlder(incoming, observedAt, stored)) return 'stale';

    const merged: RequestContent = { ...incoming };
    if (stored) {
      for (const column of KEPT_WHEN_UNKNOWN) merged[column] ??= stored[column];
    }
    const changedColumns = stored ? diffColumns(stored, merged) : [];
    const isContentChanged = stored?.content_hash !== normalized.contentHash;
    const wasUnavailable = Boolean(stored?.unavailable_at);
    if (stored && changedColumns.length === 0 && !isContentChanged && !wasUnavailable) {
      // Only an unsettled row needs its new read time; a settled one would only cost a write.
      if (!isSettled(stored) && (stored.read_at === null || stored.read_at < readAt))
        await sql.run(q.setReadAt, { request_id: stored.request_id, read_at: readAt });
      return 'unchanged';
    }

    await sql.run(q.upsertRequest, {
      ...merged,
      unavailable_at: null,
      synced_at: observedAt,
      read_at: readAt,
      first_seen_at: stored?.first_seen_at ?? observedAt,
      source,
      content_hash: normalized.contentHash,
      raw_json: rawJson,
    });
    if (!stored || isContentChanged) {
      const mayHaveChildren = stored !== undefined || !hasWriterToItself;
      if (mayHaveChildren) await sql.run(q.deleteLocations, { id: incoming.request_id });
      for (const location of normalized.locations) await sql.run(q.insertLocation, location);
      if (mayHaveChildren) await sql.run(q.deleteFields, { id: incoming.request_id });
      for (const field of normalized.fields) await sql.run(q.insertField, field);
    }
    if (normalized.account) await writeAccount(normalized.account, observedAt);
    if (normalized.facility) await writeFacility(normalized.facility, observedAt);

    if (isContentChanged && stored && changedColumns.length === 0) changedColumns.push('raw_json');
    if (wasUnavailable) changedColumns.push('unavailable_at');
    await insertChange({
      request_id: incoming.request_id,
      observed_at: observedAt,
      kind: !stored ? 'created' : wasUnavailable ? 'available' : 'updated',
      source,
      changed_columns: stored ? changedColumns.join(',') : CONTENT_COLUMNS.join(','),
      old_state: stored?.list_state ?? null,
      new_state: merged.list_state,
      old_values_json: stored ? pick(stored, changedColumns) : null,
      new_values_json: pick(
        { ...merged, unavailable_at: null },
        stored ? changedColumns : [...CONTENT_COLUMNS],
      ),
    });
    return stored ? 'changed' : 'new';
  }

  /**
   * Stores a partial observation. A change replaces the stored raw_json and clears last_updated
   * and content_hash: they described the polled record this write supersedes, so the next poll
   * sees a difference and fetches the detail again.
   */
  async function writePartial(observation: PartialRequestWrite): Promise<WriteOutcome> {
    const { content, observedAt } = observation;
    const id = content.request_id;
    const stored = await selectRow(id);
    // Older than the last write or the unavailable mark: an old "available" must not undo a mark.
    if (stored && observedAt < maxOf(stored.synced_at, stored.unavailable_at)) return 'stale';
    if (observation.account) await writeAccountName(observation.account, observedAt);

    const merged: RequestContent = { ...content };
    const values = merged as unknown as Record<string, unknown>;
    for (const column of observation.unknownColumns) values[column] = stored?.[column] ?? null;
    if (stored) merged.list_state ??= stored.list_state;
    const storedLocations = stored ? await sql.all<LocationRow>(q.selectLocations, { id }) : [];
    const movedRoles = changedRoles(storedLocations, observation.locations);
    const isChanged = !stored || diffColumns(stored, merged).length > 0 || movedRoles.length > 0;
    const wasUnavailable = Boolean(stored?.unavailable_at);
    if (!isChanged && !wasUnavailable) return 'unchanged';
    if (stored && isChanged) merged.last_updated_timestamp_utc = null;

    await sql.run(q.upsertPartial, {
      ...merged,
      synced_at: observedAt,
      first_seen_at: stored?.first_seen_at ?? observedAt,
      source: observation.source,
      raw_json: observation.rawJson,
      is_changed: isChanged ? 1 : 0,
    });
    for (const role of movedRoles) await sql.run(q.deleteLocation, { id, role });
    for (const location of observation.locations) {
      if (movedRoles.includes(location.role)) await sql.run(q.insertLocation, location);
    }
    const changedColumns = stored ? diffColumns(stored, merged) : [...CONTENT_COLUMNS];
    // Locations have no requests column: their change shows as the record (raw_json) changing.
    if (stored && isChanged && (changedColumns.length === 0 || movedRoles.length > 0)) {
      changedColumns.push('raw_json');
    }
    if (wasUnavailable) changedColumns.push('unavailable_at');
    await insertChange({
      request_id: id,
      observed_at: observedAt,
      kind: !stored ? 'created' : wasUnavailable ? 'available' : 'updated',
      source: observation.source,
      changed_columns: changedColumns.join(','),
      old_state: stored?.list_state ?? null,
      new_state: merged.list_state,
      old_values_json: stored ? pick(stored, changedColumns) : null,
      new_values_json: pick({ ...merged, unavailable_at: null }, changedColumns),
    });
    return stored ? 'changed' : 'new';
  }

  /** Upserts an account's name only, keeping the service levels and facilities polled. */
  async function writeAccountName(
    account: { account_id: string; name: string | null },
    at: string,
  ): Promise<void> {
    const changes = await sql.run(q.upsertAccountName, { ...account, updated_at: at });
    // The poll's cache would otherwise skip rewriting what it believes is already stored.
    if (changes > 0) written().forget(`account:${account.account_id}`);
  }

  /**
   * Marks a request the service no longer shows us. The row and its history stay. Returns false
   * when it was already marked or is not stored, or, with `isGuarded`, when the stored row was
   * observed after `at` (a late webhook must not mark a request a newer observation showed).
   */
  async function markUnavailable(
    requestId: string,
    at: string,
    source: WriteSource,
    { isGuarded = false }: { isGuarded?: boolean } = {},
  ): Promise<boolean> {
    const stored = await selectRow(requestId);
    if (!stored || stored.unavailable_at) return false;
    if (isGuarded && at < stored.synced_at) return false;
    await sql.run(q.setUnavailable, { request_id: requestId, unavailable_at: at });
    await insertChange({
      request_id: requestId,
      observed_at: at,
      kind: 'unavailable',
      source,
      changed_columns: 'unavailable_at',
      old_state: stored.list_state,
      new_state: stored.list_state,
      old_values_json: JSON.stringify({ unavailable_at: null }),
      new_values_json: JSON.stringify({ unavailable_at: at }),
    });
    return true;
  }

  async function isSameRaw(requestId: string, rawJson: string, listState: string) {
    const row = await sql.get(q.isSameRaw, {
      request_id: requestId,
      raw_json: rawJson,
      list_state: listState,
    });
    return row !== undefined;
  }

  return {
    write,
    writePartial,
    markUnavailable,
    /** Stored summaries of requests whose event time lies in [from, to] (canonical ISO). */
    summariesInWindow: (from: string, to: string) =>
      sql.all<StoredSummary>(q.summariesInWindow, { from, to }),
    /** The stored summary of one request, if stored. */
    summary: (requestId: string) => sql.get<StoredSummary>(q.summary, { id: requestId }),
    /** The stored summaries of those of `requestIds` that are stored, by id, in one statement. */
    async summaries(requestIds: readonly string[]): Promise<Map<string, StoredSummary>> {
      if (requestIds.length === 0) return new Map();
      const rows = await sql.all<StoredSummary>(q.summaries, {
        ids: sql.dialect.engine === 'postgres' ? requestIds : JSON.stringify(requestIds),
      });
      return new Map(rows.map((row) => [row.request_id, row]));
    },
    /**
     * True when the stored row holds exactly this record text and list state, is available and
     * has nothing in quarantine: normalizing and writing it again would change nothing.
     */
    isSameRaw,
    /**
     * isSameRaw for a page of records: true where the mirror holds the record exactly. SQLite
     * answers each in microseconds; on PostgreSQL, where each statement is a round trip, one
     * statement answers them all.
     */
    async sameRaw(
      records: readonly { id: string; text: string }[],
      listState: string,
    ): Promise<boolean[]> {
      const same = records.map(() => false);
      if (sql.dialect.engine === 'sqlite') {
        for (const [index, { id, text }] of records.entries())
          same[index] = await isSameRaw(id, text, listState);
        return same;
      }
      // PostgreSQL cannot hold a NUL: such a record is never stored as sent, and its text
      // would fail the cast to jsonb for the whole page.
      const asked = records
        .map((record, index) => ({ ...record, index }))
        .filter((record) => !jsonHasNul(record.text));
      if (asked.length === 0) return same;
      const rows = await sql.all<{ position: number | string }>(q.sameRaw, {
        ids: asked.map((r) => r.id),
        texts: asked.map((r) => r.text),
        list_state: listState,
      });
      for (const row of rows) same[asked[Number(row.position) - 1]!.index] = true;
      return same;
    },
  };
}

/** The request store's interface. */
export type RequestStore = ReturnType<typeof createRequestStore>;

/**
 * An observation older than what is stored never overwrites it. With both last_updated values,
 * they decide; otherwise the time each observation was made does.
 */
function isOlder(incoming: RequestContent, observedAt: string, stored: StoredRow): boolean {
  const incomingUpdated = incoming.last_updated_timestamp_utc;
  const storedUpdated = stored.last_updated_timestamp_utc;
  if (incomingUpdated && storedUpdated) return incomingUpdated < storedUpdated;
  return observedAt < stored.synced_at;
}

function maxOf(a: string, b: string | null): string {
  return b !== null && b > a ? b : a;
}
