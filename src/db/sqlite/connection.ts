import Database from 'better-sqlite3';
import type { Connection, Dialect, Params, ReadOptions, RowsInsert, Sql } from '../sql.js';
import { nestingCheck } from '../nesting-check.js';
import { createRowInserter } from './insert-shapes.js';
import type { Checkpointer, CheckpointStatus } from './checkpointer.js';
import { databaseError } from './errors.js';

/** The SQLite dialect: JSON functions of SQLite's json1, no row locks (writers take the file). */
export const SQLITE_DIALECT: Dialect = {
  engine: 'sqlite',
  jsonMemberIsObject: (column, member) => `json_type(${column}, '$.${member}') = 'object'`,
  forUpdate: '',
  isAnyJsonStorable: true,
};

/** An open SQLite mirror: the connection, and the raw handle SQLite-only tools need. */
export interface SqliteConnection extends Connection {
  readonly engine: 'sqlite';
  readonly sqlite: Database.Database;
  readonly path: string;
  /** The WAL's checkpoint thread of a writable file (checkpointer.ts); none when read-only. */
  readonly checkpoints: CheckpointStatus | undefined;
}

/**
 * Wraps an open better-sqlite3 handle. Statements are prepared once per SQL text and run
 * synchronously; the promises only keep one interface with PostgreSQL. One connection serves the
 * whole process, so its transactions take turns (a queue): a transaction's statements never mix
 * with another's, although the work between them may await.
 */
export function sqliteConnection(
  sqlite: Database.Database,
  path: string,
  checkpointer?: Checkpointer,
): SqliteConnection {
  const statements = new Map<string, Database.Statement>();
  const prepare = (text: string) => {
    let statement = statements.get(text);
    if (!statement) {
      statement = sqlite.prepare(text);
      statements.set(text, statement);
    }
    return statement;
  };
  const bind = (params?: Params) => (params === undefined ? [] : [params]);
  const insertShaped = createRowInserter(sqlite);
  const sql: Sql = {
    dialect: SQLITE_DIALECT,
    async all<T>(text: string, params?: Params) {
      return prepare(text).all(...bind(params)) as T[];
    },
    async get<T>(text: string, params?: Params) {
      return prepare(text).get(...bind(params)) as T | undefined;
    },
    async run(text: string, params?: Params) {
      return prepare(text).run(...bind(params)).changes;
    },
    async insertRows<T>(into: RowsInsert, rows: readonly object[]) {
      return insertShaped(into, rows) as T[];
    },
  };

  let queue: Promise<unknown> = Promise.resolve();
  const nesting = nestingCheck();
  // Async, so that a refusal rejects; everything up to `queue = ...` still runs in the call.
  const exclusive = async <T>(
    begin: string,
    work: (sql: Sql) => Promise<T>,
    afterCommit?: () => void,
  ): Promise<T> => {
    nesting.refuseIfInside();
    const turn = queue.then(() =>
      nesting.inside(async () => {
        try {
          sqlite.exec(begin);
          const result = await work(sql);
          sqlite.exec('COMMIT');
          afterCommit?.();
          return result;
        } catch (error) {
          if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
          throw databaseError(error, path);
        }
      }),
    );
    queue = turn.catch(() => undefined);
    return turn;
  };

  // Prepared once like every other statement (see pin.ts: none is left to the collector).
  const hasTable = (name: string) =>
    prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = @name").get({ name }) !==
    undefined;
  return {
    engine: 'sqlite',
    dialect: SQLITE_DIALECT,
    location: path,
    sqlite,
    path,
    checkpoints: checkpointer,
    // IMMEDIATE takes the write lock at the start: two writers wait on busy_timeout instead of
    // failing mid-transaction.
    transaction: (work) => exclusive('BEGIN IMMEDIATE', work, checkpointer?.afterCommit),
    read: <T>(work: (sql: Sql) => Promise<T>, _options?: ReadOptions) =>
      exclusive('BEGIN DEFERRED', work),
    async hasTable(name) {
      return hasTable(name);
    },
    async hasColumn(table, column) {
      const columns = prepare('SELECT name FROM pragma_table_info(@table)').all({ table }) as {
        name: string;
      }[];
      return columns.some((c) => c.name === column);
    },
    async close() {
      await queue;
      // The thread's connection first: the last one to close checkpoints and removes the WAL.
      await checkpointer?.close();
      sqlite.close();
    },
  };
}
