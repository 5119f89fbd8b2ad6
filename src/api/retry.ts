/**
 * The retry policy: exponential backoff with full jitter, `Retry-After` honoured, capped by a
 * number of attempts and a total time budget. Pure functions; the HTTP layer applies them so the
 * nock tests exercise the real policy (undici interceptors would not run under nock).
 */

/** Limits of the retry loop. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** Budget from the first attempt's start; no sleep may end past it. */
  maxTotalMs: number;
  /** Backoff ceiling of the first retry; doubles per attempt. */
  baseDelayMs: number;
  /** Largest backoff ceiling (Retry-After may ask for more, within the budget). */
  maxDelayMs: number;
}

/** Defaults: 5 attempts within 60 s, 500 ms doubling to 30 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  maxTotalMs: 60_000,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
};

/** The policy with caller overrides applied and nonsense values rejected. */
export function resolveRetryPolicy(overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...stripUndefined(overrides) };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    throw new RangeError('retry.maxAttempts must be an integer >= 1');
  }
  for (const key of ['maxTotalMs', 'baseDelayMs', 'maxDelayMs'] as const) {
    if (!Number.isFinite(policy[key]) || policy[key] < 0) {
      throw new RangeError(`retry.${key} must be a finite number >= 0`);
    }
  }
  return policy;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Full-jitter backoff before retry number `retry` (1 for the first retry):
 * uniform in [0, min(maxDelayMs, baseDelayMs * 2^(retry-1))). Full jitter spreads clients that
 * failed together, which is what a rate-limited or recovering service needs.
 */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(Math.min(Math.max(random(), 0), 1) * ceiling);
}

/**
 * Milliseconds a `Retry-After` value asks to wait: delta-seconds, or an HTTP-date measured
 * against `nowMs` (the injected clock). Null when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  // An HTTP-date always names a weekday or month; this keeps Date.parse away from bare numbers.
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** What to do after a failed attempt. */
export type RetryDecision =
  | { kind: 'retry'; delayMs: number; isFromRetryAfter: boolean }
  | { kind: 'give_up'; reason: 'attempts' | 'budget' };

/** Decides whether a retryable failure gets another attempt, and after how long. */
export function decideRetry(options: {
  /** Attempts made so far (1 after the first). */
  attempt: number;
  elapsedMs: number;
  retryAfterMs: number | null;
  policy: RetryPolicy;
  random: () => number;
}): RetryDecision {
  const { attempt, elapsedMs, retryAfterMs, policy, random } = options;
  if (attempt >= policy.maxAttempts) return { kind: 'give_up', reason: 'attempts' };
  const isFromRetryAfter = retryAfterMs !== null;
  const delayMs = retryAfterMs ?? backoffDelayMs(attempt, policy, random);
  // Sleeping past the budget only to fail later wastes the caller's time: give up now.
  if (elapsedMs + delayMs > policy.maxTotalMs) return { kind: 'give_up', reason: 'budget' };
  return { kind: 'retry', delayMs, isFromRetryAfter };
}
