import { hash } from 'node:crypto';
import { isoFromMs } from '../../time.js';
import type { PostgresConnection } from '../postgres/connection.js';
import type { Column, Table } from '../schema/index.js';
import type { SqliteConnection } from '../sqlite/connection.js';
import { isMirrorRow, processKeyIndex, sizeOf, sourceRows, type CopyLimits } from './rows.js';

/** Row count and checksum of one side of a table. */
export interface TableSum {
  rows: number;
  checksum: string;
}

/** What comparing one table found. */
export interface TableComparison {
  rows: number;
  /** Row count and checksum on each side; equal when the copy is faithful. */
  source: TableSum;
  target: TableSum;
  isEqual: boolean;
}

/** A page of the target being read, and the rows it asked for. */
interface Page {
  rows: Promise<Record<string, unknown>[]>;
  limit: number;
}

/** Rows of the first page of the target; the next pages are sized from the rows seen. */
const FIRST_PAGE_ROWS = 500;
const MIN_PAGE_ROWS = 100;

/**
 * Compares a table on both sides: row count, and a checksum of every row's values as each
 * engine reads them back. Neither side is held whole: the source is read by one statement, row
 * by row; the target in pages in primary key order, each page after the last key of the one
 * before (keyset pages: every page costs the same, where OFFSET would read all the rows before
 * it). While the server reads a page, the source's rows are summed.
 */
export async function compareTable({
  source,
  target,
  table,
  limits,
}: {
  source: SqliteConnection;
  target: PostgresConnection;
  table: Table;
  limits: CopyLimits;
}): Promise<TableComparison> {
  const columns = Object.keys(table.columns);
  const sourceSum = checksum(table);
  const targetSum = checksum(table);
  const key =
    table.primaryKey ??
    Object.entries(table.columns)
      .filter(([, column]) => column.isPrimaryKey)
      .map(([name]) => name);
  const firstPage = `SELECT ${columns.join(', ')} FROM ${table.name}
    ORDER BY ${key.join(', ')} LIMIT @limit`;
  const nextPage = `SELECT ${columns.join(', ')} FROM ${table.name}
    WHERE (${key.join(', ')}) > (${key.map((name) => `@after_${name}`).join(', ')})
    ORDER BY ${key.join(', ')} LIMIT @limit`;
  const readPage = (after: Record<string, unknown> | undefined, limit: number) => {
    const page = target.read((sql) =>
      sql.all<Record<string, unknown>>(after ? nextPage : firstPage, {
        limit,
        ...(after &&
          Object.fromEntries(key.map((name) => [`after_${name}`, after[name]] as const))),
      }),
    );
    // Awaited later, after the source's rows are summed; a failure meanwhile is not unhandled.
    page.catch(() => undefined);
    return page;
  };

  const fromSource = sourceRows(source, table, columns);
  /** Sums up to `count` source rows; false once the source has no more. */
  const sumSource = (count: number): boolean => {
    for (let i = 0; i < count; i += 1) {
      const next = fromSource.next();
      if (next.done) return false;
      // Without the rowid in front.
      sourceSum.add(next.value.slice(1));
    }
    return true;
  };
  try {
    // Pages are sized from the rows of the page before, so that one holds about `limits.bytes`.
    let perPage = Math.min(FIRST_PAGE_ROWS, limits.rows);
    let page: Page | undefined = {
      rows: readPage(undefined, perPage),
      limit: perPage,
    };
    while (page) {
      sumSource(page.limit);
      const { limit }: Page = page;
      const rows: Record<string, unknown>[] = await page.rows;
      page =
        rows.length === limit
          ? { rows: readPage(rows.at(-1), perPage), limit: perPage }
          : undefined;
      let bytes = 0;
      for (const row of rows) {
        const values = columns.map((column) => row[column]);
        bytes += sizeOf(values);
        targetSum.add(values);
      }
      if (rows.length > 0) {
        const fit = Math.floor(limits.bytes / Math.max(1, bytes / rows.length));
        perPage = Math.min(limits.rows, Math.max(MIN_PAGE_ROWS, fit));
      }
    }
    while (sumSource(limits.rows));
  } finally {
    fromSource.return();
  }
  const [s, t] = [sourceSum.result(), targetSum.result()];
  return {
    rows: s.rows,
    source: s,
    target: t,
    isEqual: s.rows === t.rows && s.checksum === t.checksum,
  };
}

/**
 * An order-free checksum of a table's rows (values in column order): the sum, modulo 2^64, of
 * each row's hash. Values are brought to one form first: timestamps canonical, JSON by value
 * (object keys sorted), booleans 1/0, numbers as numbers. sync_state's process keys are left out.
 */
function checksum(table: Table) {
  // The 64-bit sum as two 32-bit halves: plain numbers, exact, and no BigInt a row.
  let high = 0;
  let low = 0;
  let rows = 0;
  const columns = Object.values(table.columns);
  const keyIndex = processKeyIndex(table);
  return {
    add(values: readonly unknown[]) {
      if (!isMirrorRow(values, keyIndex)) return;
      let text = '[';
      for (let i = 0; i < columns.length; i += 1) {
        if (i > 0) text += ',';
        text += jsonText(canonical(columns[i]!, values[i]));
      }
      const digest = hash('sha1', `${text}]`, 'buffer');
      low += digest.readUInt32BE(4);
      high += digest.readUInt32BE(0) + Math.floor(low / 2 ** 32);
      low %= 2 ** 32;
      high %= 2 ** 32;
      rows += 1;
    },
    result: (): TableSum => ({
      rows,
      checksum: high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0'),
    }),
  };
}

function canonical(column: Column, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (column.kind) {
    case 'timestamp': {
      const ms = Date.parse(String(value));
      return Number.isFinite(ms) ? isoFromMs(ms) : String(value);
    }
    case 'json':
      try {
        return JSON.parse(String(value)) as unknown;
      } catch {
        return String(value);
      }
    case 'boolean':
      return value ? 1 : 0;
    case 'integer':
    case 'real':
    case 'id':
      return Number(value);
    default:
      return String(value);
  }
}

/** JSON text of a value, object keys sorted: equal values, equal text, whatever the key order. */
export function jsonText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let text = '[';
        for (let i = 0; i < value.length; i += 1) text += (i > 0 ? ',' : '') + jsonText(value[i]);
        return `${text}]`;
      }
      const record = value as Record<string, unknown>;
      let text = '{';
      for (const key of Object.keys(record).sort()) {
        if (record[key] === undefined) continue;
        text += `${text.length > 1 ? ',' : ''}${JSON.stringify(key)}:${jsonText(record[key])}`;
      }
      return `${text}}`;
    }
    default:
      return 'null';
  }
}
