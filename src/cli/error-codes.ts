import type { ErrorCatalog } from '../error-codes.js';

/**
 * Error codes of the command line, each with its exit class. Registered below with
 * src/error-codes.ts (the type ErrorCode); src/cli/output.ts merges the catalogs for the exit
 * codes.
 */
export const CLI_ERROR_CODES = {
  /** The service did not apply an action (found by reading the request back). */
  'cli.action_not_done': 'failure',
  /** An argument that fails its check; the message says why. */
  'cli.invalid_argument': 'usage',
  /** Wrong command, flags or arguments; the usage text follows. */
  'cli.usage': 'usage',
  /** A command's worker thread reached its heap's cap (BACKFILL_HEAP, COPY_HEAP). */
  'cli.out_of_memory': 'failure',
} as const satisfies ErrorCatalog;

declare module '../error-codes.js' {
  /** This area's codes, known to the root's ErrorCode without the root importing this file. */
  interface ErrorCatalogs {
    cli: typeof CLI_ERROR_CODES;
  }
}
