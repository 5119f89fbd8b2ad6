import type { ErrorCatalog } from '../error-codes.js';

/**
 * Error codes of the settings, each with its exit class. Registered below with src/error-codes.ts
 * (the type ErrorCode); src/cli/output.ts merges the catalogs for the exit codes.
 */
export const CONFIG_ERROR_CODES = {
  /** A setting that is missing, malformed or contradicts another. */
  'config.invalid': 'usage',
  /** The environment file: named but missing, unreadable, or a line a shell and systemd read apart. */
  'config.env_file': 'usage',
} as const satisfies ErrorCatalog;

declare module '../error-codes.js' {
  /** This area's codes, known to the root's ErrorCode without the root importing this file. */
  interface ErrorCatalogs {
    config: typeof CONFIG_ERROR_CODES;
  }
}
