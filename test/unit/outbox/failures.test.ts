import type { ErrorCode } from '../../../src/error-codes.js';
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../../src/errors.js';
import {
  backoffMs,
  BACKOFF_CAP_MS,
  classifyFailure,
  describeRefusal,
  failureText,
  inFlightText,
  isUncertain,
} from '../../../src/outbox/failures.js';

const error = (code: ErrorCode, details: Record<string, unknown> = {}, isRetryable = false) =>
  new TransportError({ code, message: `PUT requests.accept: ${code}`, details, isRetryable });

describe('classifyFailure', () => {
  it('never retries what the service refused', () => {
    for (const code of [
      'api.invalid',
      'api.not_available',
      'api.not_found',
      'api.gone',
      'api.invalid_argument',
    ] as const) {
      expect(classifyFailure(error(code)).kind).toBe('permanent');
    }
    expect(classifyFailure(error('api.unexpected_status', { status: 409 })).kind).toBe('permanent');
  });

  it('retries the rest, and tells service-wide failures and unknown outcomes apart', () => {
    expect(classifyFailure(error('api.network', {}, true))).toEqual({
      kind: 'transient',
      isOutcomeUnknown: false,
      isServiceDown: true,
    });
    expect(classifyFailure(error('api.server', { status: 502, isOutcomeUnknown: true }))).toEqual({
      kind: 'transient',
      isOutcomeUnknown: true,
      isServiceDown: false,
    });
    expect(classifyFailure(error('api.unauthorized')).isServiceDown).toBe(true);
    expect(classifyFailure(error('api.unexpected_status', { status: 302 }))).toMatchObject({
      kind: 'transient',
      isServiceDown: true,
    });
    expect(classifyFailure(new Error('disk I/O error')).kind).toBe('transient');
  });
});

describe('backoffMs', () => {
  it('doubles from 5 s and stops at 10 minutes', () => {
    expect([1, 2, 3, 4].map(backoffMs)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(backoffMs(8)).toBe(BACKOFF_CAP_MS);
    expect(backoffMs(60)).toBe(BACKOFF_CAP_MS);
  });
});

describe('describeRefusal', () => {
  it('says 403, 404 and 400 plainly, with the service message', () => {
    expect(describeRefusal(error('api.not_available', { serviceMessage: 'No permission.' }))).toBe(
      'not available to you: already assigned, declined or canceled (403); the service said: No permission.',
    );
    expect(describeRefusal(error('api.not_found'))).toBe('unknown request id (404)');
    const fields = { timestamp: [{ message: 'Timestamp is older than 7 days.' }] };
    expect(describeRefusal(error('api.invalid', { fields }))).toBe(
      'rejected as invalid (400): timestamp: Timestamp is older than 7 days.',
    );
    expect(describeRefusal(error('api.network'))).toBeUndefined();
    expect(failureText(error('api.network'))).toBe('api.network: PUT requests.accept: api.network');
  });
});

describe('the outcome-unknown marker', () => {
  it('is what a send leaves behind until its reply is stored', () => {
    const marker = inFlightText('2025-06-15T12:00:00.000Z');
    expect(isUncertain(marker)).toBe(true);
    expect(isUncertain('api.network: refused')).toBe(false);
    expect(isUncertain(null)).toBe(false);
  });
});
