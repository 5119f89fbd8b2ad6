import type { EventData, StoredRow } from '../../mirror/observations.js';
import {
  CONTENT_COLUMNS,
  columnNames,
  requestChanges,
  requestFields,
  requestLocations,
  requests,
  type RequestRow,
} from '../schema/index.js';
import { insertOneSql, type Dialect, type RowsInsert } from '../sql.js';

/* The request store's SQL, built from the table description, in the SQL both engines speak. */

/** The requests columns, in table order. */
export const REQUEST_COLUMNS = [
  'request_id',
  ...CONTENT_COLUMNS,
  'unavailable_at',
  'synced_at',
  'read_at',
  'first_seen_at',
  'source',
  'content_hash',
  'raw_json',
  'received_digest',
] as const satisfies readonly (keyof RequestRow)[];

/**
 * The columns the requests table's indexes are built on (SQLite's summary index aside: every
 * write moves its last_updated and read_at). SQLite rewrites an index whenever a statement sets
 * one of its columns, whatever the value: an edit that leaves these as stored is written with an
 * UPDATE that names none of them (see keepsIndexedColumns). PostgreSQL decides by the values
 * (a HOT update), so its statements name every column.
 */
export const INDEXED_COLUMNS = [
  ...new Set(Object.values(requests.indexes).flat()),
] as readonly (keyof StoredRow)[];

/**
 * Whether writing `row` over the stored row leaves every one of INDEXED_COLUMNS as stored: then
 * updateKeepingIndexed and updatePartialKeepingIndexed write it as the upserts would. A row not
 * stored is inserted.
 */
export function keepsIndexedColumns(
  stored: StoredRow | undefined,
  row: Partial<Record<keyof StoredRow, unknown>>,
): boolean {
  return stored !== undefined && INDEXED_COLUMNS.every((column) => row[column] === stored[column]);
}

const isUnindexed = (column: string) => !(INDEXED_COLUMNS as readonly string[]).includes(column);
const setParams = (columns: readonly string[]) =>
  columns.map((column) => `${column} = @${column}`).join(', ');

/**
 * A webhook write's raw_json on PostgreSQL: the data object of the stored event that carried it,
 * read from webhook_events on the server rather than sent a second time (4.7 KB an event). Its
 * parameter is the event's id.
 */
export const RAW_JSON_OF_EVENT = `(SELECT payload_json -> 'data' FROM webhook_events
  WHERE event_id = ?)`;

/** A partial write's raw_json as text: as given, or printed from the event's data object. */
const rawJsonText = (raw: string | EventData): string =>
  typeof raw === 'string' ? raw : JSON.stringify(raw.data);

/**
 * The named parameters of a partial write's row: raw_json as text (SQLite, or an observation no
 * stored event carried), or as `raw_event_id` where PostgreSQL reads it from webhook_events.
 */
export function partialParams<T extends { raw_json: string | EventData }>(
  dialect: Dialect,
  row: T,
): Omit<T, 'raw_json'> & { raw_json: string | null; raw_event_id?: string | null } {
  const raw = row.raw_json;
  if (dialect.engine === 'postgres')
    return typeof raw === 'string'
      ? { ...row, raw_json: raw, raw_event_id: null }
      : { ...row, raw_json: null, raw_event_id: raw.eventId };
  return { ...row, raw_json: rawJsonText(raw) };
}

/** The requests columns a write reads back first (see StoredRow). */
export const STORED_COLUMNS = REQUEST_COLUMNS.filter((c) => c !== 'source' && c !== 'raw_json');

const LOCATION_COLUMNS = columnNames(requestLocations);

// held_digest: the digest of the text the row holds, while nothing keeps the row from being
// held as sent (isSameRaw's conditions but the list state and the text): available, nothing in
// quarantine. The poll's awaiting pass compares each record's digest with it, so the summaries
// it reads at the cycle's start answer the pass too: a statement of its own was a round trip,
// and on PostgreSQL some 1,800 rows more to parse at 5,000 requests.
//
// PostgreSQL spells the times as the code compares them, canonical ISO UTC (the columns hold
// milliseconds; the session's time zone is UTC), as isoFromPostgres would: an idle cycle at
// 5,000 requests reads some 6,000, and rearranging each in a process too young for V8 to have
// optimized the function took about 15 ms, against some 3 ms of the server's.
const summaryColumns = (dialect: Dialect) => {
  const time = (column: string) =>
    dialect.engine === 'postgres' ? `to_char(${column}, '${ISO_UTC}') AS ${column}` : column;
  return `request_id, list_state, ${time('event_dt_utc')}, ${time('last_updated_timestamp_utc')},
  ${time('unavailable_at')}, ${time('read_at')},
  CASE WHEN unavailable_at IS NULL AND NOT EXISTS (SELECT 1 FROM quarantine
    WHERE quarantine.request_id = requests.request_id) THEN received_digest END AS held_digest`;
};
/** to_char's pattern of canonical ISO UTC, in a session whose time zone is UTC. */
const ISO_UTC = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';
export const list = (columns: readonly string[], prefix = '') =>
  columns.map((column) => `${prefix}${column}`).join(', ');
export const setExcluded = (columns: readonly string[]) =>
  columns.map((column) => `${column} = excluded.${column}`).join(', ');

/** The rows a write inserts, several to a statement on SQLite. */
export const ROW_INSERTS = {
  requests: {
    table: 'requests',
    columns: REQUEST_COLUMNS,
    onConflict: `ON CONFLICT (request_id) DO UPDATE SET ${setExcluded(REQUEST_COLUMNS.slice(1))}`,
  },
  locations: { table: 'request_locations', columns: LOCATION_COLUMNS },
  fields: { table: 'request_fields', columns: columnNames(requestFields) },
  changes: {
    table: 'request_changes',
    columns: columnNames(requestChanges).filter((column) => column !== 'change_id'),
  },
} as const satisfies Record<string, RowsInsert>;

/** The statements of the request store, for one dialect. */
export function requestSql(dialect: Dialect) {
  const summaryList = summaryColumns(dialect);
  return {
    selectRow: `SELECT ${list(STORED_COLUMNS)} FROM requests WHERE request_id = @id${dialect.forUpdate}`,
    summary: `SELECT ${summaryList} FROM requests WHERE request_id = @id`,
    // summary for many ids in one statement whatever their number: PostgreSQL takes them as an
    // array, SQLite as JSON text it unpacks.
    summaries: `SELECT ${summaryList} FROM requests WHERE ${
      dialect.engine === 'postgres'
        ? 'request_id = ANY(@ids::text[])'
        : 'request_id IN (SELECT value FROM json_each(@ids))'
    }`,
    // The stored row holds this observation: the same text received before (by its digest), the
    // same list state, available, and no quarantined copy waiting to be cleared.
    isSameRaw: `SELECT 1 AS same FROM requests WHERE request_id = @request_id
      AND received_digest = @digest AND list_state = @list_state AND unavailable_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM quarantine WHERE quarantine.request_id = @request_id)`,
    // isSameRaw for a page of records in one round trip (PostgreSQL): the positions (from 1) of
    // those it holds. A LATERAL lookup by primary key per record: as a join, a table not yet
    // analyzed was planned as a hash of every stored row of the state (measured when this
    // compared raw_json: 20 ms a page of 50 over 1,827 awaiting rows, against 1 ms).
    sameRaw: `SELECT p.n AS position
      FROM unnest(@ids::text[], @digests::text[]) WITH ORDINALITY AS p(id, digest, n)
      CROSS JOIN LATERAL (SELECT 1 FROM requests r WHERE r.request_id = p.id
        AND r.received_digest = p.digest AND r.list_state = @list_state
        AND r.unavailable_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM quarantine WHERE quarantine.request_id = r.request_id)
        LIMIT 1) AS held`,
    summariesInWindow: `SELECT ${summaryList} FROM requests
      WHERE event_dt_utc BETWEEN @from AND @to`,
    upsertRequest: insertOneSql(ROW_INSERTS.requests),
    // upsertRequest over a stored row that keeps its INDEXED_COLUMNS (SQLite).
    updateKeepingIndexed: `UPDATE requests
      SET ${setParams(REQUEST_COLUMNS.slice(1).filter(isUnindexed))}
      WHERE request_id = @request_id`,
    // A re-read that found nothing new still moves the read time (it may settle the row), and
    // records the text's digest when it was sent otherwise (null keeps each as it is).
    touchRow: `UPDATE requests SET read_at = COALESCE(@read_at, read_at),
      received_digest = COALESCE(@received_digest, received_digest)
      WHERE request_id = @request_id`,
    setUnavailable:
      'UPDATE requests SET unavailable_at = @unavailable_at WHERE request_id = @request_id',
    // Partial writes keep raw_json, content_hash and received_digest unless the content changed
    // (is_changed), and clear the unavailable mark unless the row keeps it (a later event's, see
    // planPartialWrite).
    upsertPartial: `INSERT INTO requests (${list(REQUEST_COLUMNS)})
      VALUES (${REQUEST_COLUMNS.map((c) =>
        ['content_hash', 'read_at', 'received_digest'].includes(c)
          ? 'NULL'
          : c === 'raw_json' && dialect.engine === 'postgres'
            ? `COALESCE(${RAW_JSON_OF_EVENT.replace('?', '@raw_event_id')}, @raw_json)`
            : `@${c}`,
      ).join(', ')})
      ON CONFLICT (request_id) DO UPDATE SET ${setExcluded(CONTENT_COLUMNS)},
        unavailable_at = excluded.unavailable_at, synced_at = excluded.synced_at,
        source = excluded.source,
        content_hash = CASE WHEN @is_changed = 1 THEN NULL ELSE requests.content_hash END,
        raw_json = CASE WHEN @is_changed = 1 THEN excluded.raw_json ELSE requests.raw_json END,
        received_digest = CASE WHEN @is_changed = 1 THEN NULL ELSE requests.received_digest END`,
    // upsertPartial over a stored row that keeps its INDEXED_COLUMNS (SQLite).
    updatePartialKeepingIndexed: `UPDATE requests
      SET ${setParams(CONTENT_COLUMNS.filter(isUnindexed))}, synced_at = @synced_at,
        source = @source,
        content_hash = CASE WHEN @is_changed = 1 THEN NULL ELSE content_hash END,
        raw_json = CASE WHEN @is_changed = 1 THEN @raw_json ELSE raw_json END,
        received_digest = CASE WHEN @is_changed = 1 THEN NULL ELSE received_digest END
      WHERE request_id = @request_id`,
    selectLocations: `SELECT ${list(LOCATION_COLUMNS)} FROM request_locations
      WHERE request_id = @id`,
    deleteLocation: 'DELETE FROM request_locations WHERE request_id = @id AND role = @role',
    deleteLocations: 'DELETE FROM request_locations WHERE request_id = @id',
    insertLocation: insertOneSql(ROW_INSERTS.locations),
    deleteFields: 'DELETE FROM request_fields WHERE request_id = @id',
    upsertAccountName: `INSERT INTO accounts (account_id, name, updated_at)
      VALUES (@account_id, @name, @updated_at)
      ON CONFLICT (account_id) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at
      WHERE accounts.name IS DISTINCT FROM excluded.name`,
    // exclude_facilities answers carry facilities null: that is not news, keep what was stored.
    upsertAccount: `INSERT INTO accounts (account_id, name, service_levels_json, facilities_json, updated_at)
      VALUES (@account_id, @name, @service_levels_json, @facilities_json, @updated_at)
      ON CONFLICT (account_id) DO UPDATE SET name = excluded.name,
        service_levels_json = excluded.service_levels_json,
        facilities_json = COALESCE(excluded.facilities_json, accounts.facilities_json),
        updated_at = excluded.updated_at`,
    upsertFacility: `INSERT INTO facilities (facility_id, name, account_id, updated_at)
      VALUES (@facility_id, @name, @account_id, @updated_at)
      ON CONFLICT (facility_id) DO UPDATE SET name = excluded.name,
        account_id = excluded.account_id, updated_at = excluded.updated_at`,
  };
}
