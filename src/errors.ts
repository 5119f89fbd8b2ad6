import type { ErrorArea, ErrorCode } from './error-codes.js';

/**
 * One error type for the whole project. Every failure carries a stable dotted `code`
 * (`api.rate_limited`, `config.invalid`; each area's catalog is its src/<area>/error-codes.ts), a
 * `hint` for the operator, and whether trying the same thing again could succeed. Wrap with
 * context on the way up; log once, at the loop boundary.
 */
export interface TransportErrorOptions {
  code: ErrorCode;
  message: string;
  hint?: string;
  cause?: unknown;
  isRetryable?: boolean;
  /** Structured context that is safe to log (never secrets, never patient data). */
  details?: Record<string, unknown>;
}

/** The project's error: code, message, hint, retryability and safe details. */
export class TransportError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly isRetryable: boolean;
  readonly details: Record<string, unknown>;

  constructor(options: TransportErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TransportError';
    this.code = options.code;
    this.hint = options.hint;
    this.isRetryable = options.isRetryable ?? false;
    this.details = options.details ?? {};
  }
}

/** True when `error` is a TransportError, optionally with the given code or code prefix (`api.`). */
export function isTransportError(
  error: unknown,
  code?: ErrorCode | ErrorArea,
): error is TransportError {
  if (!(error instanceof TransportError)) return false;
  if (code === undefined) return true;
  return code.endsWith('.') ? error.code.startsWith(code) : error.code === code;
}

/** A short, log-safe description of any thrown value. */
export function describeError(error: unknown): { code: string; message: string } {
  if (error instanceof TransportError) return { code: error.code, message: error.message };
  if (error instanceof Error) return { code: 'internal', message: error.message };
  return { code: 'internal', message: String(error) };
}
