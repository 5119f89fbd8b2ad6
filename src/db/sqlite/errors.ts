import Database from 'better-sqlite3';
import { TransportError } from '../../errors.js';

/**
 * Turns the SQLite failures an operator can act on into coded errors with a hint. The transaction
 * that failed was rolled back whole; what was committed before stays.
 */
export function databaseError(error: unknown, path: string): unknown {
  if (!(error instanceof Database.SqliteError)) return error;
  const code = error.code;
  if (code === 'SQLITE_FULL') {
    return new TransportError({
      code: 'db.full',
      message: `the database ${path} cannot grow: the disk is full (${error.message})`,
      hint: 'Free disk space where TRANSPORT_DB lives; the daemon resumes by itself, losing nothing that was committed.',
      cause: error,
      isRetryable: true,
    });
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new TransportError({
      code: 'db.locked',
      message: `the database ${path} is locked by another writer for too long (${error.message})`,
      hint: 'Another program holds a write transaction open; readers never block us, writers must commit quickly.',
      cause: error,
      isRetryable: true,
    });
  }
  if (
    code === 'SQLITE_READONLY' ||
    code === 'SQLITE_CANTOPEN' ||
    code === 'SQLITE_IOERR' ||
    code.startsWith('SQLITE_IOERR')
  ) {
    return new TransportError({
      code: 'db.io',
      message: `cannot write the database ${path} (${error.message})`,
      hint: 'Check that the file and its directory are writable by this user and the disk is healthy.',
      cause: error,
      isRetryable: true,
    });
  }
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    return new TransportError({
      code: 'db.corrupt',
      message: `the database ${path} is damaged (${error.message})`,
      hint: 'Stop the daemon, restore the latest backup (transport-sync backup), and run a backfill for the gap.',
      cause: error,
    });
  }
  return error;
}
