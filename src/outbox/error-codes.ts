import type { ErrorCatalog } from '../error-codes.js';

/**
 * Error codes of the outbox, each with its exit class. Registered below with src/error-codes.ts
 * (the type ErrorCode); src/cli/output.ts merges the catalogs for the exit codes.
 */
export const OUTBOX_ERROR_CODES = {
  /** A queued action whose request cannot be read back. */
  'outbox.unreadable_request': 'failure',
} as const satisfies ErrorCatalog;

declare module '../error-codes.js' {
  /** This area's codes, known to the root's ErrorCode without the root importing this file. */
  interface ErrorCatalogs {
    outbox: typeof OUTBOX_ERROR_CODES;
  }
}
