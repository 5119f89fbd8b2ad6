import { createHash } from 'node:crypto';
import { TransportError } from '../errors.js';
import { stableStringify } from '../json.js';
import { isoFromMs } from '../time.js';
import type { PostgresConnection } from './postgres/connection.js';
import { TABLES, type Column, type Table } from './schema/index.js';
import type { SqliteConnection } from './sqlite/connection.js';

/** Rows per batch: one PostgreSQL transaction, with its checkpoint. */
const BATCH_ROWS = 1000;
/** Parameters per INSERT, under PostgreSQL's limit of 65,535. */
const MAX_PARAMETERS = 60_000;

/** sync_state keys of a copy in progress: the source, and each table's last copied row. */
const COPY_SOURCE_KEY = 'copy:source';
const checkpointKey = (table: string) => `copy:${table}`;

/**
 * sync_state keys that describe the running daemons, not the mirror: the SQLite owner lease and
 * the members of a cluster. They are not copied (the daemons on PostgreSQL write their own) and
 * not compared; neither are the copy's own checkpoints.
 */
const isProcessKey = (key: string) =>
  key === 'daemon_owner' ||
  key === 'leader' ||
  key.startsWith('member:') ||
  key.startsWith('copy:');

/** What copying one table found. */
export interface TableCopy {
  table: string;
  rows: number;
  copied: number;
  /** Row count and checksum on each side; equal when the copy is faithful. */
  source: { rows: number; checksum: string };
  target: { rows: number; checksum: string };
  isEqual: boolean;
}

/**
 * Copies every table of a SQLite mirror into a PostgreSQL database migrated to the same schema
 * and holding no mirror yet: requests with their rows, the change log, the outbox with its
 * delivery state, webhook events, runs, quarantine, drift, gaps and checkpoints, ids included.
 * Each batch commits with a checkpoint, so a copy that was killed resumes after its last batch
 * when run again. At the end each table is compared: row count, and a checksum of every row's
 * values as both engines read them back.
 */
export async function copyMirror({
  source,
  target,
  onProgress,
}: {
  source: SqliteConnection;
  target: PostgresConnection;
  onProgress?: (table: string, copied: number, total: number) => void;
}): Promise<TableCopy[]> {
  await claimTarget(source, target);
  const results: TableCopy[] = [];
  for (const table of TABLES) {
    const copied = await copyTable(source, target, table, onProgress);
    results.push({ table: table.name, copied, ...(await compare(source, target, table)) });
  }
  await resetIdentities(target);
  if (results.every((result) => result.isEqual)) {
    await target.transaction(async (sql) => {
      await sql.run("DELETE FROM sync_state WHERE substr(key, 1, 5) = 'copy:'");
    });
  }
  return results;
}

/** The target must be empty, or hold this source's unfinished copy. */
async function claimTarget(source: SqliteConnection, target: PostgresConnection): Promise<void> {
  await target.transaction(async (sql) => {
    const claim = await sql.get<{ value: string }>(
      'SELECT value FROM sync_state WHERE key = @key',
      { key: COPY_SOURCE_KEY },
    );
    if (claim) {
      if (claim.value === source.path) return;
      throw new TransportError({
        code: 'copy.target_busy',
        message: `the target holds an unfinished copy of another mirror (${claim.value})`,
        hint: 'Finish that copy, or copy into a new, empty database.',
      });
    }
    const held = await sql.get<{ n: number }>(
      `SELECT (SELECT count(*) FROM requests) + (SELECT count(*) FROM webhook_events)
         + (SELECT count(*) FROM outbox_actions) + (SELECT count(*) FROM outbox_locations) AS n`,
    );
    if ((held?.n ?? 0) > 0) {
      throw new TransportError({
        code: 'copy.target_not_empty',
        message: 'the target database already holds a mirror; copy only into an empty one',
        hint: 'Create a new database (CREATE DATABASE ...) and give its URL to --to.',
      });
    }
    await sql.run(`INSERT INTO sync_state (key, value, updated_at) VALUES (@key, @value, @at)`, {
      key: COPY_SOURCE_KEY,
      value: source.path,
      at: isoFromMs(Date.now()),
    });
  });
}

async function copyTable(
  source: SqliteConnection,
  target: PostgresConnection,
  table: Table,
  onProgress?: (table: string, copied: number, total: number) => void,
): Promise<number> {
  const columns = Object.keys(table.columns);
  const total = countSource(source, table);
  let after = await target.read(async (sql) =>
    Number(
      (
        await sql.get<{ value: string }>('SELECT value FROM sync_state WHERE key = @key', {
          key: checkpointKey(table.name),
        })
      )?.value ?? 0,
    ),
  );
  const select = source.sqlite.prepare(
    `SELECT rowid AS copy_rowid, ${columns.join(', ')} FROM ${table.name}
     WHERE rowid > ? ORDER BY rowid LIMIT ${BATCH_ROWS}`,
  );
  let copied = 0;
  for (;;) {
    const batch = select.all(after) as (Record<string, unknown> & { copy_rowid: number })[];
    const last = batch.at(-1)?.copy_rowid;
    if (last === undefined) break;
    const rows = batch.filter(
      (row) => table.name !== 'sync_state' || !isProcessKey(String(row.key)),
    );
    // PostgreSQL takes at most 65,535 parameters a statement: wide tables go in smaller inserts.
    const perInsert = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length));
    await target.transaction(async (sql) => {
      for (let start = 0; start < rows.length; start += perInsert) {
        const chunk = rows.slice(start, start + perInsert);
        const values = chunk.map(
          (_, index) => `(${columns.map((column) => `@r${index}_${column}`).join(', ')})`,
        );
        const params: Record<string, unknown> = {};
        chunk.forEach((row, index) => {
          for (const column of columns) params[`r${index}_${column}`] = row[column];
        });
        await sql.run(
          `INSERT INTO ${table.name} (${columns.join(', ')}) VALUES ${values.join(', ')}
           ON CONFLICT DO NOTHING`,
          params,
        );
      }
      await sql.run(
        `INSERT INTO sync_state (key, value, updated_at) VALUES (@key, @value, @at)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        { key: checkpointKey(table.name), value: String(last), at: isoFromMs(Date.now()) },
      );
    });
    copied += rows.length;
    after = last;
    onProgress?.(table.name, copied, total);
  }
  return copied;
}

function countSource(source: SqliteConnection, table: Table): number {
  return (source.sqlite.prepare(`SELECT count(*) AS n FROM ${table.name}`).get() as { n: number })
    .n;
}

/** Identities continue after the ids copied. */
async function resetIdentities(target: PostgresConnection): Promise<void> {
  await target.transaction(async (sql) => {
    for (const table of TABLES) {
      const id = Object.entries(table.columns).find(([, column]) => column.kind === 'id')?.[0];
      if (!id) continue;
      await sql.get(
        `SELECT setval(pg_get_serial_sequence('${table.name}', '${id}'),
           coalesce((SELECT max(${id}) FROM ${table.name}), 0) + 1, false)`,
      );
    }
  });
}

async function compare(
  source: SqliteConnection,
  target: PostgresConnection,
  table: Table,
): Promise<Omit<TableCopy, 'table' | 'copied'>> {
  const columns = Object.keys(table.columns);
  const sourceSum = checksum(table);
  for (const row of source.sqlite
    .prepare(`SELECT ${columns.join(', ')} FROM ${table.name}`)
    .iterate() as IterableIterator<Record<string, unknown>>) {
    sourceSum.add(row);
  }
  const targetSum = checksum(table);
  // A total order, so that pages neither repeat nor skip a row.
  const order =
    table.primaryKey ??
    Object.entries(table.columns)
      .filter(([, c]) => c.isPrimaryKey)
      .map(([name]) => name);
  let offset = 0;
  for (;;) {
    const rows = await target.read((sql) =>
      sql.all<Record<string, unknown>>(
        `SELECT ${columns.join(', ')} FROM ${table.name} ORDER BY ${order.join(', ')} LIMIT ${BATCH_ROWS * 10} OFFSET ${offset}`,
      ),
    );
    for (const row of rows) targetSum.add(row);
    if (rows.length < BATCH_ROWS * 10) break;
    offset += rows.length;
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
 * An order-free checksum of a table's rows: the sum of each row's hash. Values are brought to one
 * form first: timestamps canonical, JSON by value, booleans 1/0, numbers as numbers.
 */
function checksum(table: Table) {
  let sum = 0n;
  let rows = 0;
  const entries = Object.entries(table.columns);
  return {
    add(row: Record<string, unknown>) {
      if (table.name === 'sync_state' && isProcessKey(String(row.key))) return;
      const values = entries.map(([name, column]) => canonical(column, row[name]));
      const hash = createHash('sha256').update(stableStringify(values)).digest();
      sum = (sum + hash.readBigUInt64BE(0)) & 0xffff_ffff_ffff_ffffn;
      rows += 1;
    },
    result: () => ({ rows, checksum: sum.toString(16).padStart(16, '0') }),
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
