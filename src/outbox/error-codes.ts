/** Error codes of the outbox, each with its exit class (catalog: src/error-codes.ts). */
export const OUTBOX_ERROR_CODES = {
  /** A queued action whose request cannot be read back. */
  'outbox.unreadable_request': 'failure',
} as const;
