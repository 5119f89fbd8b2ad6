/**
 * The floor of a write path: the rows the path wrote, written again into a copy of the database
 * it started from with nothing but plain statements, in transactions of 250 requests: no read, no
 * comparison, no normalizing, no JSON. What this engine can do with these rows at that moment.
 *
 * - SQLite: one INSERT per row (an INSERT ... ON CONFLICT DO UPDATE for a row that existed, as
 *   the store's own upsert), prepared once, on the raw better-sqlite3 handle.
 * - PostgreSQL: multi-row INSERTs (INSERT ... VALUES (...), (...) ...; ON CONFLICT DO UPDATE for
 *   rows that existed), one statement per table and batch, on one connection of the pool.
 *
 * For row 4, a second floor stores each webhook event first and marks it processed after, as a
 * durable intake must (IntakeFloor): its time against the plain floor's bounds that row's ratio.
 *
 * The rows come from the path's own result: the tables after a path run, compared with the
 * tables it started from (`planFloor`). Child rows the path replaces whole (a changed request's
 * locations and fields: deleted and inserted again) are replaced whole by the floor too.
 */
import type Database from 'better-sqlite3';
import type pg from 'pg';
import type { MirrorDb } from '../../src/db/open.js';
import { TABLES, type Table } from '../../src/db/schema/index.js';

type Row = Record<string, unknown>;

/** The tables one request's writes land in (run bookkeeping and checkpoints left out). */
export const FLOOR_TABLES = [
  'requests',
  'request_locations',
  'accounts',
  'facilities',
  'request_fields',
  'request_changes',
  'quarantine',
  'schema_drift',
  'webhook_events',
  'request_profiles',
] as const;

/** Tables whose rows belong to a request and are rewritten whole when it changes. */
const CHILD_TABLES = new Set(['request_locations', 'request_fields']);

/** Every row of the floor's tables. */
export type TableRows = Map<string, Row[]>;

const tableOf = (name: string): Table => {
  const table = TABLES.find((t) => t.name === name);
  if (!table) throw new Error(`no table ${name}`);
  return table;
};

/** The primary key's columns; `isId` when it is an integer the database assigns. */
function keyOf(table: Table): { columns: string[]; isId: boolean } {
  if (table.primaryKey) return { columns: [...table.primaryKey], isId: false };
  const [name, column] = Object.entries(table.columns).find(([, c]) => c.isPrimaryKey)!;
  return { columns: [name], isId: column.kind === 'id' };
}

/** The columns the floor writes: every one but a key the database assigns. */
const writtenColumns = (table: Table) =>
  Object.entries(table.columns)
    .filter(([, column]) => column.kind !== 'id')
    .map(([name]) => name);

/** Reads every row of the floor's tables. */
export function readTables(db: MirrorDb): Promise<TableRows> {
  return db.read(async (sql) => {
    const rows: TableRows = new Map();
    for (const name of FLOOR_TABLES) rows.set(name, await sql.all<Row>(`SELECT * FROM ${name}`));
    return rows;
  });
}

/** The writes of one table in one batch. */
interface TableWrites {
  table: Table;
  /** Requests whose rows in this table are deleted before the inserts (replaced whole). */
  replaceFor: string[];
  /** Rows gone since the start, by key. */
  deletes: Row[];
  /** Rows with a key that did not exist: plain INSERTs. */
  inserts: Row[];
  /** Rows whose key existed: INSERT ... ON CONFLICT DO UPDATE. */
  upserts: Row[];
}

/** The floor's writes: batches of up to 250 requests, each request's writes parents first. */
export interface FloorPlan {
  batches: TableWrites[][][];
  /** Rows written (inserted, upserted or deleted). */
  rows: number;
  requests: number;
}

const groupOf = (row: Row): string =>
  String(row.request_id ?? row.service_request_id ?? '\u0000shared');

/**
 * What the path wrote: rows of `after` that `before` lacks or holds otherwise, rows it lost,
 * and, for the requests in `replaceChildrenOf`, their locations and fields whole.
 */
export function planFloor(
  before: TableRows,
  after: TableRows,
  { replaceChildrenOf = new Set<string>(), batchSize = 250 } = {},
): FloorPlan {
  const order: string[] = [];
  const groups = new Map<string, Map<string, TableWrites>>();
  const writesOf = (group: string, table: Table): TableWrites => {
    let byTable = groups.get(group);
    if (!byTable) {
      byTable = new Map();
      groups.set(group, byTable);
      order.push(group);
    }
    let writes = byTable.get(table.name);
    if (!writes) {
      writes = { table, replaceFor: [], deletes: [], inserts: [], upserts: [] };
      byTable.set(table.name, writes);
    }
    return writes;
  };
  let rows = 0;
  for (const name of FLOOR_TABLES) {
    const table = tableOf(name);
    const key = keyOf(table);
    const keyText = (row: Row) => key.columns.map((c) => String(row[c])).join('\u0001');
    const old = before.get(name) ?? [];
    const now = after.get(name) ?? [];
    if (key.isId) {
      const seen = new Set(old.map(keyText));
      for (const row of now) {
        if (seen.has(keyText(row))) continue;
        writesOf(groupOf(row), table).inserts.push(row);
        rows += 1;
      }
      continue;
    }
    const isChild = CHILD_TABLES.has(name);
    const oldByKey = new Map(old.map((row) => [keyText(row), JSON.stringify(row)]));
    const nowKeys = new Set<string>();
    if (isChild) {
      const oldCount = new Map<string, number>();
      for (const row of old) oldCount.set(groupOf(row), (oldCount.get(groupOf(row)) ?? 0) + 1);
      for (const request of replaceChildrenOf) {
        writesOf(request, table).replaceFor.push(request);
        rows += oldCount.get(request) ?? 0;
      }
    }
    for (const row of now) {
      const k = keyText(row);
      nowKeys.add(k);
      const group = groupOf(row);
      if (isChild && replaceChildrenOf.has(group)) {
        writesOf(group, table).inserts.push(row);
        rows += 1;
        continue;
      }
      const was = oldByKey.get(k);
      if (was === JSON.stringify(row)) continue;
      const writes = writesOf(group, table);
      if (was === undefined) writes.inserts.push(row);
      else writes.upserts.push(row);
      rows += 1;
    }
    for (const row of old) {
      const group = groupOf(row);
      if (nowKeys.has(keyText(row)) || (isChild && replaceChildrenOf.has(group))) continue;
      writesOf(group, table).deletes.push(row);
      rows += 1;
    }
  }
  // Rows of no request (accounts, facilities) go with the first batch.
  const shared = order.indexOf('\u0000shared');
  if (shared > 0) order.unshift(...order.splice(shared, 1));
  const requests = order.filter((group) => group !== '\u0000shared').length;
  // Parents before children, as the foreign keys want.
  const ordered = (group: string) =>
    FLOOR_TABLES.flatMap((name) => groups.get(group)!.get(name) ?? []);
  const batches: TableWrites[][][] = [];
  for (let i = 0; i < order.length; i += batchSize)
    batches.push(order.slice(i, i + batchSize).map(ordered));
  return { batches, rows, requests };
}

const conflictClause = (table: Table, columns: string[]) => {
  const key = keyOf(table).columns;
  const set = columns.filter((c) => !key.includes(c)).map((c) => `${c} = excluded.${c}`);
  return ` ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${set.join(', ')}`;
};

/**
 * A durable intake's part of the floor (row 4's bound): the plan's webhook events are first
 * inserted unprocessed, `perCommit` to a transaction, as a receiver stores a burst before it
 * acknowledges it; the plan's batches then mark each processed (an UPDATE of processed_at, error
 * and attempts by event_id) where the plain floor inserts it whole.
 */
export interface IntakeFloor {
  perCommit: number;
}

/** The columns an event's processed mark writes. */
const MARK_COLUMNS = ['processed_at', 'error', 'attempts'] as const;
/** An event row as stored before it is applied. */
const unprocessed = (row: Row): Row => ({ ...row, processed_at: null, error: null, attempts: 0 });

/** The intake's commits: the plan's webhook events unprocessed, in its order (none without one). */
function intakeCommitsOf(plan: FloorPlan, intake: IntakeFloor | undefined): Row[][] {
  if (!intake) return [];
  const events = plan.batches.flatMap((batch) =>
    batch.flatMap((request) =>
      request.flatMap((writes) => (writes.table.name === 'webhook_events' ? writes.inserts : [])),
    ),
  );
  const commits: Row[][] = [];
  for (let i = 0; i < events.length; i += intake.perCommit)
    commits.push(events.slice(i, i + intake.perCommit).map(unprocessed));
  return commits;
}

/**
 * Writes the plan into `db`; resolves to the milliseconds the writes took. With `intake`, each
 * webhook event is stored first and marked processed after (see IntakeFloor).
 */
export async function writeFloor(
  db: MirrorDb,
  plan: FloorPlan,
  intake?: IntakeFloor,
): Promise<number> {
  return db.engine === 'sqlite'
    ? sqliteFloor(db.sqlite, plan, intake)
    : postgresFloor(db.pool, plan, intake);
}

function sqliteFloor(sqlite: Database.Database, plan: FloorPlan, intake?: IntakeFloor): number {
  const prepared = new Map<string, Database.Statement>();
  const prepare = (text: string) => {
    let statement = prepared.get(text);
    if (!statement) {
      statement = sqlite.prepare(text);
      prepared.set(text, statement);
    }
    return statement;
  };
  const statementsOf = (table: Table) => {
    const columns = writtenColumns(table);
    const insert = `INSERT INTO ${table.name} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
    const key = keyOf(table).columns;
    return {
      columns,
      key,
      insert: prepare(insert),
      upsert: prepare(insert + conflictClause(table, columns)),
      deleteRequest: CHILD_TABLES.has(table.name)
        ? prepare(`DELETE FROM ${table.name} WHERE request_id = ?`)
        : undefined,
      deleteKey: prepare(
        `DELETE FROM ${table.name} WHERE ${key.map((c) => `${c} = ?`).join(' AND ')}`,
      ),
    };
  };
  const byTable = new Map<string, ReturnType<typeof statementsOf>>();
  const of = (table: Table) => {
    let statements = byTable.get(table.name);
    if (!statements) {
      statements = statementsOf(table);
      byTable.set(table.name, statements);
    }
    return statements;
  };
  // Prepared before the clock starts, as a long-running writer has them.
  for (const batch of plan.batches)
    for (const request of batch) for (const writes of request) of(writes.table);
  const intakeCommits = intakeCommitsOf(plan, intake);
  const events = of(tableOf('webhook_events'));
  const mark = prepare(
    `UPDATE webhook_events SET ${MARK_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE event_id = ?`,
  );
  const start = performance.now();
  for (const rows of intakeCommits) {
    sqlite
      .transaction(() => {
        for (const row of rows) events.insert.run(events.columns.map((c) => row[c]));
      })
      .immediate();
  }
  for (const batch of plan.batches) {
    sqlite
      .transaction(() => {
        // Request by request, as the store writes them.
        for (const request of batch) {
          for (const writes of [...request].reverse()) {
            const s = of(writes.table);
            for (const id of writes.replaceFor) s.deleteRequest!.run(id);
            for (const row of writes.deletes) s.deleteKey.run(s.key.map((c) => row[c]));
          }
          for (const writes of request) {
            const s = of(writes.table);
            if (intake && writes.table.name === 'webhook_events') {
              for (const row of writes.inserts)
                mark.run([...MARK_COLUMNS.map((c) => row[c]), row.event_id]);
              continue;
            }
            for (const row of writes.inserts) s.insert.run(s.columns.map((c) => row[c]));
            for (const row of writes.upserts) s.upsert.run(s.columns.map((c) => row[c]));
          }
        }
      })
      .immediate();
  }
  return performance.now() - start;
}

/** Parameters per statement, under PostgreSQL's limit of 65,535. */
const MAX_PARAMETERS = 60_000;

async function postgresFloor(
  pool: pg.Pool,
  plan: FloorPlan,
  intake?: IntakeFloor,
): Promise<number> {
  const client = await pool.connect();
  try {
    const multiRow = async (table: Table, rows: Row[], isUpsert: boolean) => {
      const columns = writtenColumns(table);
      const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length));
      for (let i = 0; i < rows.length; i += perStatement) {
        const chunk = rows.slice(i, i + perStatement);
        const values: unknown[] = [];
        const tuples = chunk.map((row) => {
          const start = values.length;
          for (const c of columns) values.push(row[c] ?? null);
          return `(${columns.map((_, j) => `$${start + j + 1}`).join(', ')})`;
        });
        await client.query(
          `INSERT INTO ${table.name} (${columns.join(', ')}) VALUES ${tuples.join(', ')}${
            isUpsert ? conflictClause(table, columns) : ''
          }`,
          values,
        );
      }
    };
    // The events' processed marks, one statement a batch.
    const markProcessed = (rows: Row[]) =>
      client.query(
        `UPDATE webhook_events AS e
         SET processed_at = m.processed_at, error = m.error, attempts = m.attempts
         FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::int[])
           AS m(event_id, processed_at, error, attempts)
         WHERE e.event_id = m.event_id`,
        [
          rows.map((row) => row.event_id),
          ...MARK_COLUMNS.map((c) => rows.map((row) => row[c] ?? null)),
        ],
      );
    // A batch's rows table by table: one multi-row statement each (merged before the clock).
    const merged = plan.batches.map((batch) => {
      const byTable = new Map<string, TableWrites>();
      for (const request of batch) {
        for (const writes of request) {
          const into = byTable.get(writes.table.name);
          if (!into) byTable.set(writes.table.name, { ...writes });
          else {
            into.replaceFor = into.replaceFor.concat(writes.replaceFor);
            into.deletes = into.deletes.concat(writes.deletes);
            into.inserts = into.inserts.concat(writes.inserts);
            into.upserts = into.upserts.concat(writes.upserts);
          }
        }
      }
      return FLOOR_TABLES.flatMap((name) => byTable.get(name) ?? []);
    });
    const intakeCommits = intakeCommitsOf(plan, intake);
    const start = performance.now();
    for (const rows of intakeCommits) {
      await client.query('BEGIN');
      await multiRow(tableOf('webhook_events'), rows, false);
      await client.query('COMMIT');
    }
    for (const batch of merged) {
      await client.query('BEGIN');
      for (const writes of [...batch].reverse()) {
        if (writes.replaceFor.length > 0)
          await client.query(`DELETE FROM ${writes.table.name} WHERE request_id = ANY($1)`, [
            writes.replaceFor,
          ]);
        if (writes.deletes.length > 0) {
          const key = keyOf(writes.table).columns;
          const arrays = key.map((c) => writes.deletes.map((row) => String(row[c])));
          await client.query(
            `DELETE FROM ${writes.table.name} WHERE (${key.join(', ')}) IN
             (SELECT * FROM unnest(${key.map((_, j) => `$${j + 1}::text[]`).join(', ')}))`,
            arrays,
          );
        }
      }
      for (const writes of batch) {
        if (intake && writes.table.name === 'webhook_events') {
          await markProcessed(writes.inserts);
          continue;
        }
        if (writes.inserts.length > 0) await multiRow(writes.table, writes.inserts, false);
        if (writes.upserts.length > 0) await multiRow(writes.table, writes.upserts, true);
      }
      await client.query('COMMIT');
    }
    return performance.now() - start;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Differences between two databases' floor tables, ignoring keys the database assigns (a floor
 * must end where its path ended). Empty when they hold the same rows.
 */
export function differences(a: TableRows, b: TableRows): string[] {
  const out: string[] = [];
  for (const name of FLOOR_TABLES) {
    const table = tableOf(name);
    const columns = writtenColumns(table);
    const texts = (rows: Row[]) =>
      rows.map((row) => JSON.stringify(columns.map((c) => row[c] ?? null))).sort();
    const left = texts(a.get(name) ?? []);
    const right = texts(b.get(name) ?? []);
    if (left.length !== right.length) {
      out.push(`${name}: ${left.length} rows against ${right.length}`);
      continue;
    }
    const differing = left.filter((text, i) => text !== right[i]).length;
    if (differing > 0) out.push(`${name}: ${differing} of ${left.length} rows differ`);
  }
  return out;
}
