/** Error codes of the command line, each with its exit class (catalog: src/error-codes.ts). */
export const CLI_ERROR_CODES = {
  /** The service did not apply an action (found by reading the request back). */
  'cli.action_not_done': 'failure',
  /** An argument that fails its check; the message says why. */
  'cli.invalid_argument': 'usage',
  /** Wrong command, flags or arguments; the usage text follows. */
  'cli.usage': 'usage',
} as const;
