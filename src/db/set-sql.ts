import type { ColumnKind, Table } from './schema/index.js';
import type { Dialect } from './sql.js';

/*
 * Pieces of the statements that write a batch's rows at once, whatever its size: on PostgreSQL
 * the rows travel as one JSON text parameter that json_to_recordset unpacks, and ids as an
 * array; on SQLite ids travel as JSON text that json_each unpacks.
 */

const list = (columns: readonly string[]) => columns.join(', ');

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
export function rowsOf(table: Table, columns: readonly string[]): string {
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
export const isAmongIds = (dialect: Dialect, column: string) =>
  dialect.engine === 'postgres'
    ? `${column} IN (SELECT unnest(@ids::text[]))`
    : `${column} IN (SELECT value FROM json_each(@ids))`;

/** The `@ids` parameter of isAmongIds: an array on PostgreSQL, JSON text on SQLite. */
export const idsParam = (dialect: Dialect, ids: readonly string[]) => ({
  ids: dialect.engine === 'postgres' ? ids : JSON.stringify(ids),
});

/** INSERT of the rows in `@rows`, in their order (PostgreSQL). */
export const insertRows = (table: Table, columns: readonly string[]) =>
  `INSERT INTO ${table.name} (${list(columns)})
    SELECT ${list(columns)} FROM ${rowsOf(table, columns)} ORDER BY n`;
