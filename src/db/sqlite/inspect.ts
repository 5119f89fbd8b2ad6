import { existsSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { openSqliteDatabase } from './driver.js';
import './pin.js';
import { knownMigrations } from '../migrations.js';
import { appliedMigrations } from './open.js';

/** What a look at a database finds, without creating, migrating or changing anything. */
export type Inspection =
  | { kind: 'missing' }
  | { kind: 'unopenable'; error: string; cause?: unknown }
  | {
      kind: 'open';
      schema: { applied: number; known: number };
      /** Null when a rolled-back write went through; the error otherwise. */
      writeError: string | null;
    };

/**
 * Looks at a SQLite mirror the way the daemon will find it: opened without creating it, its
 * schema version read, and a write tried inside a transaction that is rolled back (it proves the
 * lock and the file and changes nothing).
 */
export function inspectSqlite(path: string, busyTimeoutMs = 5000): Inspection {
  if (!existsSync(path)) return { kind: 'missing' };
  let sqlite: Database.Database;
  try {
    sqlite = openSqliteDatabase(path, { fileMustExist: true });
    sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
  } catch (error) {
    return { kind: 'unopenable', error: (error as Error).message, cause: error };
  }
  try {
    const schema = {
      applied: appliedMigrations(sqlite).count,
      known: knownMigrations('sqlite').length,
    };
    let writeError: string | null = null;
    try {
      sqlite.exec('BEGIN IMMEDIATE');
      try {
        sqlite.exec('CREATE TABLE transport_sync_doctor_probe (x INTEGER)');
      } finally {
        sqlite.exec('ROLLBACK');
      }
    } catch (error) {
      writeError = (error as Error).message;
    }
    return { kind: 'open', schema, writeError };
  } finally {
    sqlite.close();
  }
}
