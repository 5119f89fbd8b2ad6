import {
  accounts,
  columnNames,
  facilities,
  requestChanges,
  requestFields,
  requestLocations,
  requests,
  CONTENT_COLUMNS,
} from '../schema/index.js';
import { insertRows, isAmongIds, rowsOf } from '../set-sql.js';
import type { Dialect, RowsInsert } from '../sql.js';
import {
  list,
  RAW_JSON_OF_EVENT,
  REQUEST_COLUMNS,
  ROW_INSERTS,
  setExcluded,
  STORED_COLUMNS,
} from './request-sql.js';

/*
 * The statements that write a batch of detail observations (request-batch.ts), whatever the
 * batch's size. The stored rows are read, and the replaced child rows deleted, with the ids as
 * an array (PostgreSQL) or as JSON text (SQLite). On PostgreSQL, where each statement is a round
 * trip, each table's rows are written by one statement, the rows travelling as one JSON text
 * parameter that json_to_recordset unpacks. SQLite runs in-process: there a prepared statement
 * per row costs less than unpacking JSON (a third to a fifth of the time, measured on the
 * requests, locations, fields and change-log rows), so it writes with the single-row statements
 * of request-sql.ts. The text of each statement never changes, so each is prepared once.
 */

const ACCOUNT_COLUMNS = columnNames(accounts);
const FACILITY_COLUMNS = columnNames(facilities);

/** The batch statements of the request store, for one dialect. */
export function requestBatchSql(dialect: Dialect) {
  return {
    // Sorted: two transactions that share requests lock them in one order (PostgreSQL).
    selectRows: `SELECT ${list(STORED_COLUMNS)} FROM requests
      WHERE ${isAmongIds(dialect, 'request_id')} ORDER BY request_id${dialect.forUpdate}`,
    deleteLocations: `DELETE FROM request_locations WHERE ${isAmongIds(dialect, 'request_id')}`,
    deleteFields: `DELETE FROM request_fields WHERE ${isAmongIds(dialect, 'request_id')}`,
    selectLocations: `SELECT ${list(ROW_INSERTS.locations.columns)} FROM request_locations
      WHERE ${isAmongIds(dialect, 'request_id')}`,
  };
}

/** The statements that write a table's rows of a batch at once (PostgreSQL). */
export const REQUEST_SET_SQL = {
  // Which rows it inserted (xmax is 0 on a row version no one has locked or updated, as a new
  // row is): a request no transaction had stored has no child rows to delete.
  upsertRequests: `${insertRows(requests, REQUEST_COLUMNS)}
    ${ROW_INSERTS.requests.onConflict}
    RETURNING request_id, xmax = 0 AS is_inserted`,
  touchRows: `UPDATE requests SET read_at = COALESCE(r.read_at, requests.read_at),
      received_digest = COALESCE(r.received_digest, requests.received_digest)
    FROM ${rowsOf(requests, ['request_id', 'read_at', 'received_digest'])}
    WHERE requests.request_id = r.request_id`,
  insertLocations: insertRows(requestLocations, ROW_INSERTS.locations.columns),
  insertFields: insertRows(requestFields, ROW_INSERTS.fields.columns),
  // As upsertAccount: an answer without facilities (null) keeps the stored ones.
  upsertAccounts: `${insertRows(accounts, ACCOUNT_COLUMNS)}
    ON CONFLICT (account_id) DO UPDATE SET name = excluded.name,
      service_levels_json = excluded.service_levels_json,
      facilities_json = COALESCE(excluded.facilities_json, accounts.facilities_json),
      updated_at = excluded.updated_at`,
  upsertFacilities: `${insertRows(facilities, FACILITY_COLUMNS)}
    ON CONFLICT (facility_id) DO UPDATE SET ${setExcluded(FACILITY_COLUMNS.slice(1))}`,
  insertChanges: insertRows(requestChanges, ROW_INSERTS.changes.columns),
};

/** The requests columns a partial write sets: the hash, read time and digest are the poll's. */
const PARTIAL_COLUMNS = REQUEST_COLUMNS.filter(
  (c) => c !== 'content_hash' && c !== 'read_at' && c !== 'received_digest',
);

/**
 * request-sql.ts's upsertPartial for rows several to a statement (PostgreSQL): for rows whose
 * content changed (is_changed 1: the record replaces raw_json, clears the hash and the digest)
 * and for the rest; their raw_json given as text, or as the id of the stored event whose data
 * it is (RAW_JSON_OF_EVENT).
 */
const upsertPartials = (isChanged: boolean, isRawOfEvent: boolean): RowsInsert => ({
  table: 'requests',
  columns: PARTIAL_COLUMNS,
  ...(isRawOfEvent && { valueSql: { raw_json: RAW_JSON_OF_EVENT } }),
  onConflict: `ON CONFLICT (request_id) DO UPDATE SET ${setExcluded(CONTENT_COLUMNS)},
    unavailable_at = excluded.unavailable_at, synced_at = excluded.synced_at,
    source = excluded.source,
    ${
      isChanged
        ? 'content_hash = NULL, raw_json = excluded.raw_json, received_digest = NULL'
        : `content_hash = requests.content_hash, raw_json = requests.raw_json,
          received_digest = requests.received_digest`
    }`,
});

/** The statements that write a batch of partial observations at once (PostgreSQL). */
export const PARTIAL_SET_SQL = {
  /** upsertPartials by a row's is_changed, then by how its raw_json is given. */
  upsertPartials: [
    { text: upsertPartials(false, false), ofEvent: upsertPartials(false, true) },
    { text: upsertPartials(true, false), ofEvent: upsertPartials(true, true) },
  ] as const,
  deleteLocationRoles: `DELETE FROM request_locations l
    USING ${rowsOf(requestLocations, ['request_id', 'role'])}
    WHERE l.request_id = r.request_id AND l.role = r.role`,
  // As upsertAccountName: only a name that differs is written.
  upsertAccountNames: `${insertRows(accounts, ['account_id', 'name', 'updated_at'])}
    ON CONFLICT (account_id) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at
    WHERE accounts.name IS DISTINCT FROM excluded.name`,
  // Names the batch itself changed (see foldAccountNames): written whatever is stored.
  upsertAccountNamesForced: `${insertRows(accounts, ['account_id', 'name', 'updated_at'])}
    ON CONFLICT (account_id) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at`,
};
