/** Error codes of the settings, each with its exit class (catalog: src/error-codes.ts). */
export const CONFIG_ERROR_CODES = {
  /** A setting that is missing, malformed or contradicts another. */
  'config.invalid': 'usage',
} as const;
