import type { ErrorCatalog } from '../error-codes.js';

/**
 * Error codes of the simulator, each with its exit class. Registered below with src/error-codes.ts
 * (the type ErrorCode); src/cli/output.ts merges the catalogs for the exit codes.
 */
export const SIMULATOR_ERROR_CODES = {
  /** A time flag that does not parse. */
  'simulator.bad_time': 'failure',
  /** The simulator port is in use. */
  'simulator.listen_failed': 'failure',
  /** No such request in the simulated world. */
  'simulator.unknown_request': 'failure',
} as const satisfies ErrorCatalog;

declare module '../error-codes.js' {
  /** This area's codes, known to the root's ErrorCode without the root importing this file. */
  interface ErrorCatalogs {
    simulator: typeof SIMULATOR_ERROR_CODES;
  }
}
