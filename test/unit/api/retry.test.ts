import { describe, expect, it } from 'vitest';
import {
  backoffDelayMs,
  decideRetry,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  resolveRetryPolicy,
} from '../../../src/api/retry.js';

const NOW = Date.UTC(2026, 0, 28, 12, 0, 0);

describe('backoffDelayMs (full jitter)', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };

  it('stays within [0, min(max, base * 2^(n-1)))', () => {
    for (let retry = 1; retry <= 8; retry += 1) {
      const ceiling = Math.min(1000, 100 * 2 ** (retry - 1));
      expect(backoffDelayMs(retry, policy, () => 0)).toBe(0);
      expect(backoffDelayMs(retry, policy, () => 0.999999)).toBeLessThan(ceiling);
      expect(backoffDelayMs(retry, policy, () => 0.999999)).toBeGreaterThanOrEqual(ceiling - 1);
      for (let i = 0; i < 50; i += 1) {
        const delay = backoffDelayMs(retry, policy, Math.random);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(ceiling);
      }
    }
  });

  it('is the random share of the ceiling', () => {
    expect(backoffDelayMs(3, policy, () => 0.5)).toBe(200);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('7', NOW)).toBe(7000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
    expect(parseRetryAfter('1.5', NOW)).toBe(1500);
  });

  it('reads an HTTP-date against the given clock', () => {
    expect(parseRetryAfter('Wed, 28 Jan 2026 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Wed, 28 Jan 2026 11:00:00 GMT', NOW)).toBe(0);
  });

  it('ignores absent and unreadable values', () => {
    expect(parseRetryAfter(null, NOW)).toBeNull();
    expect(parseRetryAfter('', NOW)).toBeNull();
    expect(parseRetryAfter('-5', NOW)).toBeNull();
    expect(parseRetryAfter('soon', NOW)).toBeNull();
  });
});

describe('decideRetry', () => {
  const policy = resolveRetryPolicy({ maxAttempts: 3, maxTotalMs: 10_000, baseDelayMs: 1000 });
  const random = () => 0.5;

  it('retries with backoff, then gives up at maxAttempts', () => {
    expect(decideRetry({ attempt: 1, elapsedMs: 0, retryAfterMs: null, policy, random })).toEqual({
      kind: 'retry',
      delayMs: 500,
      isFromRetryAfter: false,
    });
    expect(decideRetry({ attempt: 3, elapsedMs: 0, retryAfterMs: null, policy, random })).toEqual({
      kind: 'give_up',
      reason: 'attempts',
    });
  });

  it('prefers Retry-After, and gives up instead of sleeping past the budget', () => {
    expect(
      decideRetry({ attempt: 1, elapsedMs: 0, retryAfterMs: 4000, policy, random }),
    ).toMatchObject({
      kind: 'retry',
      delayMs: 4000,
      isFromRetryAfter: true,
    });
    expect(
      decideRetry({ attempt: 1, elapsedMs: 7000, retryAfterMs: 4000, policy, random }),
    ).toEqual({
      kind: 'give_up',
      reason: 'budget',
    });
  });

  it('rejects nonsense policies', () => {
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => resolveRetryPolicy({ maxTotalMs: -1 })).toThrow(RangeError);
    expect(resolveRetryPolicy({ maxAttempts: undefined })).toEqual(DEFAULT_RETRY_POLICY);
  });
});
