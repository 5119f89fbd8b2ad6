import {
  accounts,
  columnNames,
  facilities,
  requestChanges,
  requestFields,
  requestLocations,
  requests,
  type ColumnKind,
  type Table,
} from '../schema/index.js';
import type { Dialect } from '../sql.js';
import { list, REQUEST_COLUMNS, setExcluded, STORED_COLUMNS } from './request-sql.js';

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

/** Each kind's type in the row set PostgreSQL unpacks (JSON columns arrive as their text). */
const POSTGRES_TYPES: Record<ColumnKind, string> = {
  text: 'text',
  timestamp: 'timestamptz',
  date: 'date',
  json: 'text',
  integer: 'integer',
  real: 'double precision',
  boolean: 'boolean',
  id: 'bigint',
};

/**
 * The rows of the JSON array in parameter `@rows` as relation `r` (PostgreSQL): the columns of
 * `table` named by `columns`, each of its kind, and `n`, the row's position in the array.
 */
function rowsOf(table: Table, columns: readonly string[]): string {
  const kindOf = (column: string) => table.columns[column]!.kind;
  const typed = columns.map((column) => `${column} ${POSTGRES_TYPES[kindOf(column)]}`);
  const selected = columns.map((column) =>
    kindOf(column) === 'json' ? `${column}::jsonb AS ${column}` : column,
  );
  return `(SELECT ${selected.join(', ')}, n
    FROM ROWS FROM (json_to_recordset(@rows::json) AS (${typed.join(', ')}))
      WITH ORDINALITY AS x(${list(columns)}, n)) AS r`;
}

/**
 * `column` is one of the ids in parameter `@ids`. On PostgreSQL as a semi-join, not `= ANY(...)`:
 * a prepared statement's generic plan cannot hash an array parameter, and a table not yet
 * analyzed is then scanned comparing each row with every id (50 ms for 250 ids over 10,000
 * locations, measured).
 */
const isAmongIds = (dialect: Dialect, column: string) =>
  dialect.engine === 'postgres'
    ? `${column} IN (SELECT unnest(@ids::text[]))`
    : `${column} IN (SELECT value FROM json_each(@ids))`;

/** INSERT of the rows in `@rows`, in their order (PostgreSQL). */
const insertRows = (table: Table, columns: readonly string[]) =>
  `INSERT INTO ${table.name} (${list(columns)})
    SELECT ${list(columns)} FROM ${rowsOf(table, columns)} ORDER BY n`;

const ACCOUNT_COLUMNS = columnNames(accounts);
const FACILITY_COLUMNS = columnNames(facilities);
const CHANGE_COLUMNS = columnNames(requestChanges).filter((column) => column !== 'change_id');

/** The batch statements of the request store, for one dialect. */
export function requestBatchSql(dialect: Dialect) {
  return {
    // Sorted: two transactions that share requests lock them in one order (PostgreSQL).
    selectRows: `SELECT ${list(STORED_COLUMNS)} FROM requests
      WHERE ${isAmongIds(dialect, 'request_id')} ORDER BY request_id${dialect.forUpdate}`,
    deleteLocations: `DELETE FROM request_locations WHERE ${isAmongIds(dialect, 'request_id')}`,
    deleteFields: `DELETE FROM request_fields WHERE ${isAmongIds(dialect, 'request_id')}`,
  };
}

/** The statements that write a table's rows of a batch at once (PostgreSQL). */
export const REQUEST_SET_SQL = {
  // Which rows it inserted (xmax is 0 on a row version no one has locked or updated, as a new
  // row is): a request no transaction had stored has no child rows to delete.
  upsertRequests: `${insertRows(requests, REQUEST_COLUMNS)}
    ON CONFLICT (request_id) DO UPDATE SET ${setExcluded(REQUEST_COLUMNS.slice(1))}
    RETURNING request_id, xmax = 0 AS is_inserted`,
  setReadAts: `UPDATE requests SET read_at = r.read_at
    FROM ${rowsOf(requests, ['request_id', 'read_at'])}
    WHERE requests.request_id = r.request_id`,
  insertLocations: insertRows(requestLocations, columnNames(requestLocations)),
  insertFields: insertRows(requestFields, columnNames(requestFields)),
  // As upsertAccount: an answer without facilities (null) keeps the stored ones.
  upsertAccounts: `${insertRows(accounts, ACCOUNT_COLUMNS)}
    ON CONFLICT (account_id) DO UPDATE SET name = excluded.name,
      service_levels_json = excluded.service_levels_json,
      facilities_json = COALESCE(excluded.facilities_json, accounts.facilities_json),
      updated_at = excluded.updated_at`,
  upsertFacilities: `${insertRows(facilities, FACILITY_COLUMNS)}
    ON CONFLICT (facility_id) DO UPDATE SET ${setExcluded(FACILITY_COLUMNS.slice(1))}`,
  insertChanges: insertRows(requestChanges, CHANGE_COLUMNS),
};
