import type { ErrorCatalog } from '../error-codes.js';

/**
 * Error codes of operations: the monitoring endpoint and backups, each with its exit class.
 * Registered below with src/error-codes.ts (the type ErrorCode); src/cli/output.ts merges the
 * catalogs for the exit codes.
 */
export const OPS_ERROR_CODES = {
  /** TRANSPORT_HTTP_LISTEN is in use or not on this host. */
  'ops.listen_failed': 'failure',
  /** The backup copy failed its integrity check. */
  'backup.corrupt': 'failure',
  /** The backup file exists already. */
  'backup.exists': 'failure',
  /** The backup directory does not exist. */
  'backup.no_directory': 'failure',
  /** The backup would overwrite the database itself. */
  'backup.same_file': 'failure',
  /** The mirror is on PostgreSQL: pg_dump backs it up. */
  'backup.postgres': 'usage',
} as const satisfies ErrorCatalog;

declare module '../error-codes.js' {
  /** This area's codes, known to the root's ErrorCode without the root importing this file. */
  interface ErrorCatalogs {
    ops: typeof OPS_ERROR_CODES;
  }
}
