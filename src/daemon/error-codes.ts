import type { ErrorCatalog } from '../error-codes.js';

/**
 * Error codes of the daemon, each with its exit class. Registered below with src/error-codes.ts
 * (the type ErrorCode); src/cli/output.ts merges the catalogs for the exit codes.
 */
export const DAEMON_ERROR_CODES = {
  /** Another daemon holds this database. */
  'daemon.already_running': 'failure',
  /** The daemon is stopping; the work was not started. */
  'daemon.stopping': 'failure',
} as const satisfies ErrorCatalog;

declare module '../error-codes.js' {
  /** This area's codes, known to the root's ErrorCode without the root importing this file. */
  interface ErrorCatalogs {
    daemon: typeof DAEMON_ERROR_CODES;
  }
}
