import type { ErrorCatalog } from '../error-codes.js';

/**
 * Error codes of the webhook receiver, each with its exit class. Registered below with
 * src/error-codes.ts (the type ErrorCode); src/cli/output.ts merges the catalogs for the exit
 * codes.
 */
export const WEBHOOKS_ERROR_CODES = {
  /** TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE holds no usable public key. */
  'webhook.key_invalid': 'usage',
  /** TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE cannot be read. */
  'webhook.key_unreadable': 'usage',
  /** TRANSPORT_WEBHOOK_LISTEN is in use or not on this host. */
  'webhook.listen_failed': 'failure',
  /** No public key and unsigned deliveries not allowed. */
  'webhook.no_key': 'usage',
  /** TRANSPORT_WEBHOOK_LISTEN is not set. */
  'webhook.no_listen': 'failure',
  /** The TLS certificate and key do not make a usable pair. */
  'webhook.tls_invalid': 'usage',
  /** The TLS certificate or key cannot be read. */
  'webhook.tls_unreadable': 'usage',
} as const satisfies ErrorCatalog;

declare module '../error-codes.js' {
  /** This area's codes, known to the root's ErrorCode without the root importing this file. */
  interface ErrorCatalogs {
    webhooks: typeof WEBHOOKS_ERROR_CODES;
  }
}
