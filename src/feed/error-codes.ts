import type { ErrorCatalog } from '../error-codes.js';

/**
 * Error codes of the change feed's sinks, each with its exit class. Registered below with
 * src/error-codes.ts (the type ErrorCode); src/cli/output.ts merges the catalogs for the exit
 * codes.
 */
export const FEED_ERROR_CODES = {
  /** TRANSPORT_FEED_WEBHOOK_SECRET_FILE does not hold a whsec_ secret. */
  'feed.secret_invalid': 'usage',
  /** A sink's file setting (secret, credentials, CA) cannot be read. */
  'feed.file_unreadable': 'usage',
  /** TRANSPORT_FEED_WEBHOOK_URL is set without its secret. */
  'feed.no_secret': 'usage',
  /** A sink did not take a delivery, or cannot be reached (retried with backoff). */
  'feed.delivery_failed': 'failure',
  /** The NATS stream holds another database's change at a position of ours (a restore). */
  'feed.stream_diverged': 'failure',
} as const satisfies ErrorCatalog;

declare module '../error-codes.js' {
  /** This area's codes, known to the root's ErrorCode without the root importing this file. */
  interface ErrorCatalogs {
    feed: typeof FEED_ERROR_CODES;
  }
}
