import type { ErrorCatalog } from '../error-codes.js';

/**
 * Error codes of the service client, each with its exit class. Registered below with
 * src/error-codes.ts (the type ErrorCode); src/cli/output.ts merges the catalogs for the exit
 * codes.
 */
export const API_ERROR_CODES = {
  /** The endpoint answered 404 or 410 as a whole: retired (TRANSPORT_POLL=auto switches to webhooks). */
  'api.endpoint_gone': 'failure',
  /** The request is gone (410). */
  'api.gone': 'failure',
  /** The service refused the call as invalid (422 or 400 with a reason). */
  'api.invalid': 'failure',
  /** An argument the client refuses before calling. */
  'api.invalid_argument': 'failure',
  /** The service refused the client id or secret. */
  'api.invalid_client': 'failure',
  /** An answer that is not the JSON the spec describes. */
  'api.malformed_response': 'failure',
  /** No answer: connection refused, reset or DNS failure. */
  'api.network': 'failure',
  /** The request is not available to this provider (403 on its detail). */
  'api.not_available': 'failure',
  /** No such request (404). */
  'api.not_found': 'failure',
  /** 429: the service asked us to slow down. */
  'api.rate_limited': 'failure',
  /** 5xx from the service. */
  'api.server': 'failure',
  /** No answer within TRANSPORT_HTTP_TIMEOUT_MS. */
  'api.timeout': 'failure',
  /** No access token could be obtained. */
  'api.token_unavailable': 'failure',
  /** 401 even with a fresh token. */
  'api.unauthorized': 'failure',
  /** Any other status. */
  'api.unexpected_status': 'failure',
} as const satisfies ErrorCatalog;

declare module '../error-codes.js' {
  /** This area's codes, known to the root's ErrorCode without the root importing this file. */
  interface ErrorCatalogs {
    api: typeof API_ERROR_CODES;
  }
}
