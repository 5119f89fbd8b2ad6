import { TransportError } from '../../errors.js';
import {
  DATABASE,
  isErrnoError,
  fileProblemError,
  fileSystemError,
  findReadProblem,
  findWriteProblem,
} from '../file-errors.js';

/** better-sqlite3's SqliteError, told by its shape: this module loads no driver. */
export interface SqliteFailure extends Error {
  code: string;
}

/** Whether `error` is a SqliteError (`code` like SQLITE_READONLY). */
export function isSqliteError(error: unknown): error is SqliteFailure {
  return (
    error instanceof Error &&
    error.name === 'SqliteError' &&
    typeof (error as { code?: unknown }).code === 'string'
  );
}

/** The SQLite or file-system failure behind `error`: itself or a cause (drizzle wraps them). */
function machineFailure(error: unknown): unknown {
  let at: unknown = error;
  for (let depth = 0; at instanceof Error && depth < 5; depth += 1) {
    if (isSqliteError(at) || isErrnoError(at)) return at;
    at = at.cause;
  }
  return error;
}

/** The primary result code of an extended one: SQLITE_IOERR_SHMSIZE is SQLITE_IOERR. */
function primaryCode(code: string): string {
  const primary = /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;
  return primary;
}

/**
 * Turns the SQLite and file-system failures an operator can act on into coded errors with a
 * hint: a read-only file or folder, a full disk, a damaged file or one that is no database, a
 * lock held too long. SQLite's own words for the first two are vague ("unable to open database
 * file", "disk I/O error"), so the file and its folder are looked at to name the cause. The
 * transaction that failed was rolled back whole; what was committed before stays. Anything else
 * is returned as it is.
 */
export function databaseError(
  error: unknown,
  path: string,
  { noun = DATABASE, verb }: { noun?: string; verb?: 'open' | 'write' } = {},
): unknown {
  if (error instanceof TransportError) return error;
  const failure = machineFailure(error);
  const translated = isSqliteError(failure)
    ? sqliteError(failure, { path, noun, verb })
    : fileSystemError(failure, { path, noun, verb });
  return translated instanceof TransportError ? translated : error;
}

/**
 * A SqliteError that reached the command line untranslated, where the file it was about is not
 * known: coded by SQLite's result code alone.
 */
export function sqliteErrorWithoutPath(error: SqliteFailure): TransportError | undefined {
  return sqliteError(error, { noun: DATABASE });
}

function sqliteError(
  error: SqliteFailure,
  { path, noun, verb }: { path?: string; noun: string; verb?: 'open' | 'write' },
): TransportError | undefined {
  const code = primaryCode(error.code);
  const name = path === undefined ? noun : `${noun} ${path}`;
  if (code === 'SQLITE_FULL') {
    if (path !== undefined) {
      const problem = { kind: 'full', at: path, reason: 'ENOSPC' } as const;
      return fileProblemError(problem, { path, noun, verb }, error);
    }
    return new TransportError({
      code: 'db.full',
      message: `cannot ${verb ?? 'write'} ${name}: the disk is full (${error.message})`,
      hint: 'Free space where TRANSPORT_DB lives; nothing committed is lost, and the daemon resumes by itself once there is room.',
      cause: error,
      isRetryable: true,
    });
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new TransportError({
      code: 'db.locked',
      message: `${name} is locked by another writer for too long (${error.message})`,
      hint: 'Another program holds a write transaction open; readers never block us, writers must commit quickly.',
      cause: error,
      isRetryable: true,
    });
  }
  if (code === 'SQLITE_CORRUPT') {
    return new TransportError({
      code: 'db.corrupt',
      message: `${name} is damaged (${error.message})`,
      hint: 'Stop the daemon, restore the latest backup (see `transport-sync help backup`), start the daemon and run a backfill for the time since the backup.',
      cause: error,
    });
  }
  if (code === 'SQLITE_NOTADB') {
    return new TransportError({
      code: 'db.corrupt',
      message: `${name} is not an SQLite database, or its header is damaged (${error.message})`,
      hint: "Check that TRANSPORT_DB (or --db) names the mirror's database file. If it does, the file is damaged: stop the daemon, restore the latest backup and run a backfill for the time since.",
      cause: error,
    });
  }
  if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_IOERR') {
    return unwritable(error, code, { path, noun, name, verb });
  }
  return undefined;
}

/**
 * A read-only, unopenable or failing database, with the cause the file system shows: a
 * read-only file or folder, a full disk (the "disk I/O error" SQLite reports when it cannot
 * grow its shared-memory file), or a file this user may not read.
 */
function unwritable(
  error: SqliteFailure,
  code: string,
  {
    path,
    noun,
    name,
    verb = code === 'SQLITE_CANTOPEN' ? 'open' : 'write',
  }: { path?: string; noun: string; name: string; verb?: 'open' | 'write' },
): TransportError {
  // An in-memory database has no file to look at.
  if (path !== undefined && path !== ':memory:') {
    const problem =
      findWriteProblem(path) ?? (code === 'SQLITE_CANTOPEN' ? findReadProblem(path) : undefined);
    if (problem) return fileProblemError(problem, { path, noun, verb }, error);
  }
  if (code === 'SQLITE_READONLY') {
    return new TransportError({
      code: 'db.read_only',
      message: `cannot ${verb} ${name}: SQLite opened it read-only (${error.message})`,
      hint: 'Check that the file, its -wal and -shm files and their folder are writable by the user that runs transport-sync, and that the file system is mounted read-write.',
      cause: error,
      isRetryable: true,
    });
  }
  if (code === 'SQLITE_CANTOPEN') {
    return new TransportError({
      code: 'db.open_failed',
      message: `cannot open ${name} (${error.message})`,
      hint: 'Check TRANSPORT_DB, and that the file and its folder exist and are readable and writable by this user.',
      cause: error,
    });
  }
  return new TransportError({
    code: 'db.io',
    message: `cannot ${verb} ${name}: the disk reported an I/O error (${error.message})`,
    hint: 'Check that the file and its folder are writable by this user, that the disk has room (`df -h`) and is healthy (`dmesg`).',
    cause: error,
    isRetryable: true,
  });
}
