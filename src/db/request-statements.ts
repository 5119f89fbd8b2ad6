import type Database from 'better-sqlite3';
import { CONTENT_COLUMNS, type LocationRow, type RequestContent } from '../sync/normalize.js';

/*
 * The request store's SQL and the row helpers its write paths share (the detail write and the
 * partial write of webhooks). Plain prepared statements: these are the hot paths of every cycle.
 */

/** A requests row as the store reads it back before writing. */
export type StoredRow = RequestContent & {
  unavailable_at: string | null;
  synced_at: string;
  first_seen_at: string;
  content_hash: string | null;
  read_at: string | null;
};

const LOCATION_MEMBERS = [
  'lat',
  'lng',
  'zip',
  'city',
  'name',
  'state',
  'street',
  'address',
  'country',
] as const satisfies readonly (keyof LocationRow)[];

/** Roles whose location was added, removed or differs in any member but the id. */
export function changedRoles(
  stored: LocationRow[],
  incoming: LocationRow[],
): LocationRow['role'][] {
  const key = (row: LocationRow | undefined) =>
    row ? JSON.stringify(LOCATION_MEMBERS.map((member) => row[member])) : null;
  return (['pickup', 'destination'] as const).filter(
    (role) =>
      key(stored.find((row) => row.role === role)) !==
      key(incoming.find((row) => row.role === role)),
  );
}

/** Content columns whose stored and merged values differ. */
export function diffColumns(stored: StoredRow, merged: RequestContent): string[] {
  return CONTENT_COLUMNS.filter((column) => stored[column] !== merged[column]);
}

/** JSON of the named columns' values, for the change log. */
export function pick(row: object, columns: readonly string[]): string {
  const values = row as Record<string, unknown>;
  return JSON.stringify(
    Object.fromEntries(columns.map((column) => [column, values[column] ?? null])),
  );
}

/** The prepared statements of the request store. */
export function prepareRequestStatements(sqlite: Database.Database) {
  const requestColumns = [
    'request_id',
    ...CONTENT_COLUMNS,
    'unavailable_at',
    'synced_at',
    'read_at',
    'first_seen_at',
    'source',
    'content_hash',
    'raw_json',
  ];
  const summaryColumns =
    'request_id, list_state, event_dt_utc, last_updated_timestamp_utc, unavailable_at, read_at';
  return {
    selectRow: sqlite.prepare(
      `SELECT ${['request_id', ...CONTENT_COLUMNS, 'unavailable_at', 'synced_at', 'first_seen_at', 'content_hash', 'read_at'].join(', ')} FROM requests WHERE request_id = ?`,
    ),
    summary: sqlite.prepare(`SELECT ${summaryColumns} FROM requests WHERE request_id = ?`),
    // The stored row is exactly this observation: same text, same list state, available, and
    // no quarantined copy waiting to be cleared.
    isSameRaw: sqlite.prepare(
      `SELECT 1 FROM requests WHERE request_id = @request_id AND raw_json = @raw_json
         AND list_state = @list_state AND unavailable_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM quarantine WHERE quarantine.request_id = @request_id)`,
    ),
    summariesInWindow: sqlite.prepare(
      `SELECT ${summaryColumns} FROM requests WHERE event_dt_utc BETWEEN @from AND @to`,
    ),
    upsertRequest: sqlite.prepare(
      `INSERT INTO requests (${requestColumns.join(', ')})
       VALUES (${requestColumns.map((column) => `@${column}`).join(', ')})
       ON CONFLICT (request_id) DO UPDATE SET
       ${requestColumns
         .filter((column) => column !== 'request_id')
         .map((column) => `${column} = excluded.${column}`)
         .join(', ')}`,
    ),
    // A re-read that found nothing new still moves the read time: it may settle the row.
    setReadAt: sqlite.prepare(
      'UPDATE requests SET read_at = @read_at WHERE request_id = @request_id',
    ),
    setUnavailable: sqlite.prepare(
      'UPDATE requests SET unavailable_at = @unavailable_at WHERE request_id = @request_id',
    ),
    // Partial writes keep raw_json and content_hash unless the content changed (is_changed).
    upsertPartial: sqlite.prepare(
      `INSERT INTO requests (${requestColumns.join(', ')})
       VALUES (${requestColumns
         .map((column) =>
           ['unavailable_at', 'content_hash', 'read_at'].includes(column) ? 'NULL' : `@${column}`,
         )
         .join(', ')})
       ON CONFLICT (request_id) DO UPDATE SET
       ${['request_id', ...CONTENT_COLUMNS]
         .filter((column) => column !== 'request_id')
         .map((column) => `${column} = excluded.${column}`)
         .join(', ')},
       unavailable_at = NULL, synced_at = excluded.synced_at, source = excluded.source,
       content_hash = CASE WHEN @is_changed = 1 THEN NULL ELSE requests.content_hash END,
       raw_json = CASE WHEN @is_changed = 1 THEN excluded.raw_json ELSE requests.raw_json END`,
    ),
    selectLocations: sqlite.prepare(
      `SELECT request_id, role, location_id, lat, lng, zip, city, name, state, street, address, country
       FROM request_locations WHERE request_id = ?`,
    ),
    deleteLocation: sqlite.prepare(
      'DELETE FROM request_locations WHERE request_id = ? AND role = ?',
    ),
    upsertAccountName: sqlite.prepare(
      `INSERT INTO accounts (account_id, name, updated_at) VALUES (@account_id, @name, @updated_at)
       ON CONFLICT (account_id) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at
       WHERE accounts.name IS NOT excluded.name`,
    ),
    deleteLocations: sqlite.prepare('DELETE FROM request_locations WHERE request_id = ?'),
    insertLocation: sqlite.prepare(
      `INSERT INTO request_locations (request_id, role, location_id, lat, lng, zip, city, name, state, street, address, country)
       VALUES (@request_id, @role, @location_id, @lat, @lng, @zip, @city, @name, @state, @street, @address, @country)`,
    ),
    deleteFields: sqlite.prepare('DELETE FROM request_fields WHERE request_id = ?'),
    insertField: sqlite.prepare(
      'INSERT INTO request_fields (request_id, scope, name, value_json) VALUES (@request_id, @scope, @name, @value_json)',
    ),
    // exclude_facilities answers carry facilities null: that is not news, keep what was stored.
    upsertAccount: sqlite.prepare(
      `INSERT INTO accounts (account_id, name, service_levels_json, facilities_json, updated_at)
       VALUES (@account_id, @name, @service_levels_json, @facilities_json, @updated_at)
       ON CONFLICT (account_id) DO UPDATE SET name = excluded.name,
         service_levels_json = excluded.service_levels_json,
         facilities_json = COALESCE(excluded.facilities_json, accounts.facilities_json),
         updated_at = excluded.updated_at`,
    ),
    upsertFacility: sqlite.prepare(
      `INSERT INTO facilities (facility_id, name, account_id, updated_at)
       VALUES (@facility_id, @name, @account_id, @updated_at)
       ON CONFLICT (facility_id) DO UPDATE SET name = excluded.name,
         account_id = excluded.account_id, updated_at = excluded.updated_at`,
    ),
    insertChange: sqlite.prepare(
      `INSERT INTO request_changes (request_id, observed_at, kind, source, changed_columns, old_state, new_state, old_values_json, new_values_json)
       VALUES (@request_id, @observed_at, @kind, @source, @changed_columns, @old_state, @new_state, @old_values_json, @new_values_json)`,
    ),
  };
}
