/** Error codes of the simulator, each with its exit class (catalog: src/error-codes.ts). */
export const SIMULATOR_ERROR_CODES = {
  /** A time flag that does not parse. */
  'simulator.bad_time': 'failure',
  /** The simulator port is in use. */
  'simulator.listen_failed': 'failure',
  /** No such request in the simulated world. */
  'simulator.unknown_request': 'failure',
} as const;
