import { describeFieldErrors, isOutcomeUnknown, type FieldErrors } from '../api/errors.js';
import { describeError, isTransportError } from '../errors.js';

/**
 * What a failed send means for the row: `permanent` failures can never succeed and are not
 * retried; `transient` ones are. `isServiceDown` failures concern every request alike (no
 * connection, no token, rate limited), so a drain pass stops instead of trying each request.
 */
export interface FailureClass {
  kind: 'permanent' | 'transient';
  /** The service may have processed the call: a resend may repeat it. */
  isOutcomeUnknown: boolean;
  isServiceDown: boolean;
}

/** First backoff after a transient failure; it doubles per attempt. */
export const BACKOFF_BASE_MS = 5_000;
/** Longest wait between attempts of one row. */
export const BACKOFF_CAP_MS = 10 * 60_000;

// The request itself is refused: 400, 403, 404, 410, or an argument the client would not send.
const PERMANENT_CODES = new Set([
  'api.invalid',
  'api.not_available',
  'api.not_found',
  'api.gone',
  'api.invalid_argument',
]);

// Failures that have nothing to do with the request at hand. A network failure or timeout counts
// only when no connection was made: a reset after sending may be this request's alone.
const SERVICE_DOWN_CODES = new Set([
  'api.token_unavailable',
  'api.unauthorized',
  'api.invalid_client',
  'api.rate_limited',
]);

/** Classifies an error thrown by an action of the service client. */
export function classifyFailure(error: unknown): FailureClass {
  const isUnknown = isOutcomeUnknown(error);
  if (!isTransportError(error)) {
    // Not the service's answer (a bug, a database error): keep the row and try again later.
    return { kind: 'transient', isOutcomeUnknown: false, isServiceDown: false };
  }
  const status = typeof error.details.status === 'number' ? error.details.status : null;
  const isOther4xx =
    error.code === 'api.unexpected_status' && status !== null && status >= 400 && status < 500;
  if (PERMANENT_CODES.has(error.code) || isOther4xx) {
    return { kind: 'permanent', isOutcomeUnknown: false, isServiceDown: false };
  }
  // A redirect means misconfigured URLs: every request will get it.
  const isNoConnection =
    (error.code === 'api.network' || error.code === 'api.timeout') && !isUnknown;
  const isServiceDown =
    isNoConnection || SERVICE_DOWN_CODES.has(error.code) || error.code === 'api.unexpected_status';
  return { kind: 'transient', isOutcomeUnknown: isUnknown, isServiceDown };
}

/** The wait before the next attempt of a row that has been tried `attempts` times. */
export function backoffMs(attempts: number): number {
  // No jitter: one daemon drains one database, so there is no herd of clients to spread.
  return Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));
}

const REFUSALS: Record<string, string> = {
  'api.not_available': 'not available to you: already assigned, declined or canceled (403)',
  'api.not_found': 'unknown request id (404)',
  'api.gone': 'the request is gone (410)',
};

/**
 * The service's refusal in plain words, with the service's own message when it sent one, or
 * undefined when `error` is not a refusal (the caller reports it as it is).
 */
export function describeRefusal(error: unknown): string | undefined {
  if (!isTransportError(error)) return undefined;
  const serviceMessage =
    typeof error.details.serviceMessage === 'string' ? error.details.serviceMessage : undefined;
  const said = serviceMessage ? `; the service said: ${serviceMessage}` : '';
  if (error.code === 'api.invalid') {
    const fields = error.details.fields as FieldErrors | FieldErrors[] | undefined;
    const summary = fields ? describeFieldErrors(fields) : (serviceMessage ?? 'invalid request');
    return `rejected as invalid (400): ${summary}`;
  }
  const text = REFUSALS[error.code];
  if (text) return `${text}${said}`;
  if (error.code === 'api.unexpected_status') return `${error.message}${said}`;
  return undefined;
}

/** The text for last_error: the refusal in plain words, else the error's code and message. */
export function failureText(error: unknown): string {
  const refusal = describeRefusal(error);
  if (refusal) return refusal;
  const { code, message } = describeError(error);
  return `${code}: ${message}`;
}

/**
 * last_error begins with this while a send's outcome is unknown: the service may have processed
 * it. It is written before every send (so a killed process leaves it behind) and kept through
 * later transient failures until the row is resolved, so accept and decline know to read the
 * request back before sending again.
 */
export const OUTCOME_UNKNOWN = 'outcome unknown: ';

/** The last_error written just before a send leaves. */
export function inFlightText(now: string): string {
  return `${OUTCOME_UNKNOWN}sending since ${now}; if this stays, the process stopped before storing the reply`;
}

/** True when an earlier send of the row may have reached the service. */
export function isUncertain(lastError: string | null): boolean {
  return lastError?.startsWith(OUTCOME_UNKNOWN) ?? false;
}
