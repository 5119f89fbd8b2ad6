/**
 * Classifies what `fetch` threw. Whether the service could have processed a request decides
 * whether a non-idempotent action may be sent again, so the "certainly not sent" set is narrow:
 * only failures that happen before a connection exists.
 */

/** What a thrown fetch failure means for retrying. */
export interface ThrownFailure {
  kind: 'network' | 'timeout';
  /** The first `code` found on the error or its causes (ECONNRESET, UND_ERR_SOCKET, ...). */
  errno: string | undefined;
  /** Worth another attempt at all (false for TLS/certificate failures, which will not heal). */
  isTransient: boolean;
  /** True only when no byte of the request can have reached the service. */
  isUnsent: boolean;
}

// No connection was established, so the request was never sent.
const UNSENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

// The attempt ran out of time after the request may have reached the service.
const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The first string `code` on `error`, its `cause` chain, or an AggregateError's first member. */
export function findErrorCode(error: unknown, depth = 0): string | undefined {
  if (depth > 5 || typeof error !== 'object' || error === null) return undefined;
  const record = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof record.code === 'string') return record.code;
  const fromCause = findErrorCode(record.cause, depth + 1);
  if (fromCause !== undefined) return fromCause;
  return Array.isArray(record.errors) ? findErrorCode(record.errors[0], depth + 1) : undefined;
}

/** Classifies a value thrown by fetch or by reading the body (the caller's abort is handled before). */
export function classifyThrown(error: unknown, isAttemptTimedOut: boolean): ThrownFailure {
  const errno = findErrorCode(error);
  const isUnsent = errno !== undefined && UNSENT_CODES.has(errno);
  const isTimeout =
    isAttemptTimedOut ||
    (errno !== undefined && TIMEOUT_CODES.has(errno)) ||
    (error instanceof Error && error.name === 'TimeoutError');
  const isTls = errno !== undefined && (errno.startsWith('ERR_TLS_') || errno.includes('CERT'));
  return { kind: isTimeout ? 'timeout' : 'network', errno, isTransient: !isTls, isUnsent };
}
