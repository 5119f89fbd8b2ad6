import { TransportError } from '../errors.js';
import { fileSystemError, isErrnoError } from './file-errors.js';
import { postgresError } from './postgres/errors.js';
import { isSqliteError, sqliteErrorWithoutPath } from './sqlite/errors.js';

/*
 * The last line of defence for failures the machine causes: a SqliteError, a PostgreSQL error
 * or a file-system error that reached the command line without passing the translator of the
 * place it came from (src/db/sqlite/errors.ts, src/db/postgres/errors.ts), which knows the file
 * or server and so says more. Loads no database driver.
 */

/** pg's DatabaseError, told by its shape: a five-character SQLSTATE and a severity. */
function isPostgresServerError(error: unknown): boolean {
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string';
}

/** Calls that only write: a refused permission on them means the file cannot be written. */
const WRITING_CALLS = new Set([
  'mkdir',
  'write',
  'chmod',
  'rename',
  'link',
  'unlink',
  'copyfile',
  'ftruncate',
  'fsync',
]);

/**
 * Whether a system error says a file cannot be written. A refused `open` may have been for
 * reading, so only the codes that say it whatever the call are taken from it.
 */
function isWriteFailure(error: NodeJS.ErrnoException): boolean {
  if (['EROFS', 'ENOSPC', 'EDQUOT', 'EIO'].includes(error.code ?? '')) return true;
  return WRITING_CALLS.has(error.syscall ?? '');
}

/**
 * `error` as a coded error when it is a database or file-system failure an operator can act on
 * (read-only, full, damaged, unreachable, refused); undefined otherwise (a bug, to report).
 */
export function machineError(error: unknown): TransportError | undefined {
  if (!(error instanceof Error) || error instanceof TransportError) return undefined;
  if (isSqliteError(error)) return sqliteErrorWithoutPath(error);
  if (isPostgresServerError(error)) {
    const translated = postgresError(error, '(TRANSPORT_DB)');
    return translated instanceof TransportError ? translated : undefined;
  }
  if (isErrnoError(error) && error.path !== undefined && isWriteFailure(error)) {
    const translated = fileSystemError(error, { path: error.path, noun: 'the file' });
    return translated instanceof TransportError ? translated : undefined;
  }
  return undefined;
}
