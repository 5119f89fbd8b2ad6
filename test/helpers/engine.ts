import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { openDatabase, type MirrorDb } from '../../src/db/open.js';
import type { Connection } from '../../src/db/sql.js';
import type { SqliteConnection } from '../../src/db/sqlite/connection.js';
import { adminQuery } from './pg-admin.js';
import { tempDir } from './records.js';

/** The engine this test project runs on: `postgres` in the postgres project, else `sqlite`. */
export function testEngine(): 'sqlite' | 'postgres' {
  return inject('engine') ?? 'sqlite';
}

/** A database of the test's own, and how to throw it away. */
export interface TestDatabase {
  /** A TRANSPORT_DB value: a file path, or a postgres:// URL. */
  location: string;
  drop(): Promise<void>;
}

/**
 * A fresh, empty database on the project's engine: a file in a temporary directory, or a new
 * database on the test server (created here, dropped by `drop`, whoever is still connected).
 */
export function createTestDatabase(name = 'mirror.db'): Promise<TestDatabase> {
  return createDatabase(name, false);
}

/**
 * A fresh database holding the schema already, as opening it would leave it, for tests that open
 * it at once. On PostgreSQL a copy of the run's migrated template (test/setup/postgres-server.ts),
 * a fifth of the server's work of migrating; a SQLite file migrates when first opened, in
 * milliseconds.
 */
export function createMigratedTestDatabase(name = 'mirror.db'): Promise<TestDatabase> {
  return createDatabase(name, true);
}

/**
 * A migrated database of the test file's own, opened before its tests and closed and dropped
 * after them; the open mirror is `db()`.
 */
export function openedMigratedDatabase(name = 'mirror.db'): { db: () => MirrorDb } {
  let database: TestDatabase | undefined;
  let db: MirrorDb | undefined;
  beforeAll(async () => {
    database = await createMigratedTestDatabase(name);
    db = await openDatabase({ location: database.location });
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });
  return { db: () => db! };
}

async function createDatabase(name: string, isMigrated: boolean): Promise<TestDatabase> {
  if (testEngine() === 'sqlite') {
    return { location: join(tempDir(), name), drop: async () => undefined };
  }
  const admin = new URL(inject('postgresUrl'));
  const database = `ts_${process.pid}_${randomBytes(5).toString('hex')}`;
  const template = isMigrated ? ` TEMPLATE ${inject('postgresTemplate')}` : '';
  await adminQuery(admin.toString(), `CREATE DATABASE ${database}${template}`);
  const url = new URL(admin.toString());
  url.pathname = `/${database}`;
  return {
    location: url.toString(),
    drop: () => adminQuery(admin.toString(), `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
  };
}

/** Works on a database a CLI process wrote, opened read-only as another program would. */
export async function reading<T>(
  location: string,
  work: (db: Connection) => Promise<T>,
): Promise<T> {
  const db = await openDatabase({ location, isReadOnly: true, shouldMigrate: false });
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

/** Every row of a read-only query on the mirror, on either engine (`@name` parameters). */
export function queryAll<T = Record<string, unknown>>(
  db: Connection,
  sql: string,
  params?: object,
): Promise<T[]> {
  return db.read((s) => s.all<T>(sql, params));
}

/** The first row of a read-only query, or undefined. */
export function queryOne<T = Record<string, unknown>>(
  db: Connection,
  sql: string,
  params?: object,
): Promise<T | undefined> {
  return db.read((s) => s.get<T>(sql, params));
}

/** Runs a writing statement in a transaction of its own; resolves to the rows it changed. */
export function execute(db: Connection, sql: string, params?: object): Promise<number> {
  return db.transaction((s) => s.run(sql, params));
}

/** `SELECT count(*)` of a table, with an optional condition. */
export async function countRows(db: Connection, table: string, where = '1 = 1', params?: object) {
  const row = await queryOne<{ n: number }>(
    db,
    `SELECT count(*) AS n FROM ${table} WHERE ${where}`,
    params,
  );
  return row!.n;
}

/**
 * The raw better-sqlite3 handle of a SQLite mirror, for tests of what only SQLite has (files
 * named *.sqlite.test.ts); throws on another engine.
 */
export function sqliteOf(db: Connection): Database.Database {
  if (db.engine !== 'sqlite') {
    throw new Error(`a SQLite-only test ran on ${db.engine}: name its file *.sqlite.test.ts`);
  }
  return (db as SqliteConnection).sqlite;
}

/**
 * The engine's own check that a database is whole, e.g. after a process was killed mid-write.
 * SQLite: `PRAGMA integrity_check` (pages, b-trees, indexes against their tables) and
 * `PRAGMA foreign_key_check`. PostgreSQL guarantees that structure itself (WAL, crash recovery,
 * foreign keys checked at every write) and has no such check without extensions: asserted is what
 * it can show, that every index of the schema is valid and ready, every foreign key validated,
 * and every table reads whole.
 */
export async function expectDatabaseIntact(db: Connection): Promise<void> {
  if (db.engine === 'sqlite') {
    const sqlite = sqliteOf(db);
    expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    return;
  }
  const indexes = await queryAll<{ index: string; isValid: number; isReady: number }>(
    db,
    `SELECT i.indexrelid::regclass::text AS index, i.indisvalid AS "isValid", i.indisready AS "isReady"
     FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
     WHERE c.relnamespace = current_schema()::regnamespace`,
  );
  expect(indexes.length).toBeGreaterThan(0);
  for (const index of indexes) expect(index, index.index).toMatchObject({ isValid: 1, isReady: 1 });
  const unvalidated = await queryAll(
    db,
    `SELECT conname FROM pg_constraint
     WHERE contype = 'f' AND NOT convalidated AND connamespace = current_schema()::regnamespace`,
  );
  expect(unvalidated).toEqual([]);
  const tables = await queryAll<{ name: string }>(
    db,
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
  );
  expect(tables.map((t) => t.name)).toContain('requests');
  for (const { name } of tables) await countRows(db, `"${name}"`);
}
