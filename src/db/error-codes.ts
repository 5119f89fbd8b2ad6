import type { ErrorCatalog } from '../error-codes.js';

/**
 * Error codes of the database, each with its exit class. Registered below with src/error-codes.ts
 * (the type ErrorCode); src/cli/output.ts merges the catalogs for the exit codes.
 */
export const DB_ERROR_CODES = {
  /** The file is not a healthy SQLite database. */
  'db.corrupt': 'failure',
  /** The disk or the database is full. */
  'db.full': 'failure',
  /** An I/O error reading or writing the file. */
  'db.io': 'failure',
  /**
   * The database (its file or folder, or the server) cannot be written: a read-only file system,
   * permissions that do not let this user write, an immutable file, a read-only server.
   */
  'db.read_only': 'failure',
  /** Another writer held the database past busy_timeout. */
  'db.locked': 'failure',
  /** No database at the path (a read-only command), or no such database on the server. */
  'db.missing': 'failure',
  /** TRANSPORT_DB names a folder that does not exist (only migrate creates one). */
  'db.folder_missing': 'usage',
  /** The database was migrated by a newer version. */
  'db.newer_schema': 'failure',
  /** The database has not been migrated (run migrate). */
  'db.not_migrated': 'failure',
  /** The file cannot be opened, or the server refused the role's use of the database. */
  'db.open_failed': 'failure',
  /** The PostgreSQL server cannot be reached. */
  'db.unreachable': 'failure',
  /** The PostgreSQL server refused the role: a wrong or missing password, or no pg_hba.conf entry. */
  'db.auth_failed': 'failure',
  /** copy --to: the target holds an unfinished copy of another mirror. */
  'copy.target_busy': 'failure',
  /** copy --to: the target already holds a mirror. */
  'copy.target_not_empty': 'failure',
  /** copy --to: a daemon still writes the source. */
  'copy.source_in_use': 'failure',
  /** copy --to: the target is not a PostgreSQL URL, or the source is not SQLite. */
  'copy.engines': 'usage',
} as const satisfies ErrorCatalog;

declare module '../error-codes.js' {
  /** This area's codes, known to the root's ErrorCode without the root importing this file. */
  interface ErrorCatalogs {
    db: typeof DB_ERROR_CODES;
  }
}
