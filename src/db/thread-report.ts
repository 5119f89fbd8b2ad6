import { TransportError, type TransportErrorOptions } from '../errors.js';
import { machineError } from './machine-errors.js';

/*
 * Errors across a worker thread's boundary (the copy's, the backfill's): a message carries data,
 * not an Error. A coded error crosses whole, with its code and hint, and a machine's failure
 * (a full disk, a lost server) is coded first as it would be in the main thread; anything else
 * crosses as its message and stack.
 */

/** An error as a worker reports it. */
export type FailureReport =
  | { kind: 'coded'; options: Omit<TransportErrorOptions, 'cause'> }
  | { kind: 'unexpected'; message: string; stack: string | undefined };

/** What a worker posts for `error`. */
export function reportOf(error: unknown): FailureReport {
  const known = error instanceof TransportError ? error : machineError(error);
  if (known) {
    const { code, message, hint, isRetryable, details } = known;
    return {
      kind: 'coded',
      options: { code, message, isRetryable, details, ...(hint !== undefined && { hint }) },
    };
  }
  const unexpected = error instanceof Error ? error : new Error(String(error));
  return { kind: 'unexpected', message: unexpected.message, stack: unexpected.stack };
}

/** The error a report stands for, to be thrown again in the main thread. */
export function errorOf(report: FailureReport): Error {
  if (report.kind === 'coded') return new TransportError(report.options);
  const error = new Error(report.message);
  if (report.stack) error.stack = report.stack;
  return error;
}
