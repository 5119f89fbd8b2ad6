/** Error codes of the daemon, each with its exit class (catalog: src/error-codes.ts). */
export const DAEMON_ERROR_CODES = {
  /** Another daemon holds this database. */
  'daemon.already_running': 'failure',
  /** The daemon is stopping; the work was not started. */
  'daemon.stopping': 'failure',
} as const;
