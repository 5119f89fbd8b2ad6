import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../../src/errors.js';
import {
  fileProblemError,
  fileSystemError,
  findWriteProblem,
} from '../../../src/db/file-errors.js';
import { databaseError, isSqliteError } from '../../../src/db/sqlite/errors.js';
import { tempDir } from '../../helpers/records.js';

/** A system error as Node.js raises it for a failed call on `path`. */
function errno(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: failed, ${syscall} '${path}'`), {
    code,
    errno: -1,
    syscall,
    path,
  });
}

/** The coded error `databaseError` makes of `error` (fails the test when it makes none). */
function translated(error: unknown, path: string): TransportError {
  const result = databaseError(error, path);
  if (!(result instanceof TransportError)) throw new Error(`not translated: ${String(result)}`);
  return result;
}

describe('SQLite failures as coded errors', () => {
  it('names a file that is not a database, with SQLite’s own words kept', () => {
    const path = join(tempDir(), 'notes.txt');
    writeFileSync(path, 'hello, this is not a database\n');
    let thrown: unknown;
    try {
      new Database(path).pragma('journal_mode = WAL');
    } catch (error) {
      thrown = error;
    }
    expect(isSqliteError(thrown)).toBe(true);
    const error = translated(thrown, path);
    expect(error.code).toBe('db.corrupt');
    expect(error.message).toBe(
      `the database ${path} is not an SQLite database, or its header is damaged (file is not a database)`,
    );
    expect(error.hint).toMatch(/^Check that TRANSPORT_DB \(or --db\) names the mirror's database/);
    expect(error.cause).toBe(thrown);
  });

  it('tells a damaged file, a full disk and a held lock apart by the result code', () => {
    const path = join(tempDir(), 'm.db');
    const corrupt = translated(
      new Database.SqliteError('database disk image is malformed', 'SQLITE_CORRUPT'),
      path,
    );
    expect([corrupt.code, corrupt.message]).toEqual([
      'db.corrupt',
      `the database ${path} is damaged (database disk image is malformed)`,
    ]);
    expect(corrupt.hint).toMatch(/restore the latest backup/);
    const full = translated(
      new Database.SqliteError('database or disk is full', 'SQLITE_FULL'),
      path,
    );
    expect(full.code).toBe('db.full');
    expect(full.isRetryable).toBe(true);
    expect(full.message).toMatch(/: the disk holding .* is full \(database or disk is full\)$/);
    const busy = translated(new Database.SqliteError('database is locked', 'SQLITE_BUSY'), path);
    expect(busy.code).toBe('db.locked');
  });

  it('a write refused on a healthy, writable file is still a read-only database', () => {
    const path = join(tempDir(), 'm.db');
    new Database(path).close();
    const error = translated(
      new Database.SqliteError('attempt to write a readonly database', 'SQLITE_READONLY'),
      path,
    );
    expect(error.code).toBe('db.read_only');
    expect(error.message).toBe(
      `cannot write the database ${path}: SQLite opened it read-only (attempt to write a readonly database)`,
    );
  });

  it('finds the failure behind a wrapper (drizzle wraps what SQLite throws)', () => {
    const path = join(tempDir(), 'm.db');
    const inner = new Database.SqliteError('database disk image is malformed', 'SQLITE_CORRUPT');
    const wrapped = new Error('Failed query: CREATE TABLE x', { cause: inner });
    expect(translated(wrapped, path).code).toBe('db.corrupt');
  });

  it('leaves what is not the machine’s fault as it is', () => {
    const bug = new TypeError('cannot read properties of undefined');
    expect(databaseError(bug, '/x/m.db')).toBe(bug);
    const constraint = new Database.SqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT');
    expect(databaseError(constraint, '/x/m.db')).toBe(constraint);
    const coded = new TransportError({ code: 'db.missing', message: 'no database' });
    expect(databaseError(coded, '/x/m.db')).toBe(coded);
  });
});

describe('file-system failures as coded errors', () => {
  it('a read-only file system, a refused permission and a protected file each say what to do', () => {
    const dir = tempDir();
    const path = join(dir, 'm.db');
    const rofs = translated(errno('EROFS', 'open', path), path);
    expect(rofs.code).toBe('db.read_only');
    expect(rofs.message).toMatch(
      new RegExp(
        `^cannot write the database ${path}: its folder ${dir} is on a read-only file system \\(EROFS`,
      ),
    );
    expect(rofs.hint).toMatch(/^Remount it read-write, or point TRANSPORT_DB at a writable place/);
    expect(rofs.hint).toMatch(/-wal and -shm/);
    writeFileSync(path, '');
    const denied = translated(errno('EACCES', 'open', path), path);
    expect(denied.message).toMatch(/: the file is not writable by this user \(uid \d+\)/);
    expect(denied.hint).toMatch(/write access to/);
    const owned = translated(errno('EPERM', 'chmod', path), path);
    expect(owned.message).toMatch(/: the file may not be changed by this user/);
    expect(owned.hint).toMatch(/chattr -i/);
  });

  it('a folder that cannot be created is blamed on the nearest one that exists', () => {
    const dir = tempDir();
    const path = join(dir, 'new', 'deeper', 'm.db');
    const error = translated(errno('EACCES', 'mkdir', join(dir, 'new')), path);
    expect(error.message).toMatch(new RegExp(`: ${dir} is not writable by this user`));
  });

  it('a full disk or quota is db.full; EIO is db.io; other errors stay', () => {
    const path = join(tempDir(), 'm.db');
    expect(translated(errno('ENOSPC', 'write', path), path).code).toBe('db.full');
    expect(translated(errno('EDQUOT', 'write', path), path).message).toMatch(/disk quota/);
    expect(translated(errno('EIO', 'write', path), path).code).toBe('db.io');
    const missing = errno('ENOENT', 'open', path);
    expect(fileSystemError(missing, { path, noun: 'the database' })).toBe(missing);
  });

  it('speaks of the backup, not TRANSPORT_DB, for a backup’s file', () => {
    const path = join(tempDir(), 'backup.db');
    const error = databaseError(errno('ENOSPC', 'write', path), path, { noun: 'the backup' });
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).message).toMatch(/^cannot write the backup /);
    expect((error as TransportError).hint).toMatch(/or write to another file system\.$/);
    expect((error as TransportError).hint).not.toMatch(/TRANSPORT_DB|daemon/);
  });

  it('finds nothing wrong with a writable folder that has room', () => {
    expect(findWriteProblem(join(tempDir(), 'm.db'))).toBeUndefined();
  });

  it('opening is said as opening', () => {
    const path = join(tempDir(), 'm.db');
    const problem = { kind: 'read_only', at: path, reason: 'EROFS' } as const;
    const error = fileProblemError(problem, { path, noun: 'the database', verb: 'open' }, null);
    expect(error.message).toBe(
      `cannot open the database ${path}: the file is on a read-only file system`,
    );
  });
});
