/**
 * Fault injection, decided per call with the seeded PRNG so a failing run can be replayed.
 * 5xx and 429 answer before the handler runs (the service never saw the call). A dropped
 * connection and a truncated body happen after the handler ran: the action took effect but the
 * answer was lost, which is the case a client's retry logic most often gets wrong.
 */
import * as z from 'zod';
import type { Clock } from '../clock.js';
import {
  codedError,
  ENDPOINTS,
  json,
  type Endpoint,
  type FaultKind,
  type SimResponse,
} from './http.js';
import type { Random } from './random.js';

const rate = z.number().min(0).max(1).optional();

/** Fault settings; every fault is off by default. Rates are probabilities per call. */
export const faultOptionsSchema = z.strictObject({
  /** 500, 502 (an HTML gateway page) or 503. */
  errorRate: rate,
  /** 429 with Retry-After. */
  rateLimitRate: rate,
  /** Retry-After seconds, default 1; sent as an HTTP-date one time in four. */
  retryAfterSec: z.number().int().min(0).max(3600).optional(),
  /** Connection destroyed without a response. */
  dropRate: rate,
  /** Full Content-Length announced, half the body sent, connection destroyed. */
  truncateRate: rate,
  /** The token endpoint answers 503. */
  tokenOutage: z.boolean().optional(),
  /** Extra latency in ms on a share `slowRate` (default all) of calls. */
  slowMs: z.number().int().min(0).max(600_000).optional(),
  slowRate: rate,
  /** Limit the random faults and slowness to these endpoints. */
  endpoints: z.array(z.enum(ENDPOINTS)).optional(),
  /** Endpoints that answer 410 as a whole (retired). */
  gone: z.array(z.enum(ENDPOINTS)).optional(),
  /**
   * An enforced rate limit: API calls (the token endpoint aside) beyond this many in any second
   * answer 429 with Retry-After, as a service that throttles would.
   */
  rateLimitPerSec: z.number().min(0.1).max(100_000).optional(),
});

/** Fault settings (see `faultOptionsSchema`). */
export type FaultOptions = z.infer<typeof faultOptionsSchema>;

/** What to do to one call. */
export type FaultDecision =
  | { kind: 'none' }
  | { kind: 'drop' }
  | { kind: 'truncate' }
  | { kind: Exclude<FaultKind, 'drop' | 'truncate'>; response: SimResponse };

/** Decides faults per call. */
export interface FaultInjector {
  set(options: FaultOptions): void;
  get(): FaultOptions;
  /** The fault for one call to `endpoint`, and the extra latency to add. */
  decide(endpoint: Endpoint): { fault: FaultDecision; slowMs: number };
}

const GATEWAY_PAGE =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n';

/** A fault injector reading `rng` and, for HTTP-date Retry-After values, `clock`. */
export function createFaultInjector({ rng, clock }: { rng: Random; clock: Clock }): FaultInjector {
  let options: FaultOptions = {};
  // The calls let through in the last second, for the enforced rate limit.
  const admitted: number[] = [];
  const isOverLimit = (endpoint: Endpoint) => {
    if (options.rateLimitPerSec === undefined || endpoint === 'token') return false;
    const now = clock.now();
    while (admitted.length > 0 && admitted[0]! <= now - 1000) admitted.shift();
    if (admitted.length >= options.rateLimitPerSec) return true;
    admitted.push(now);
    return false;
  };

  const serverError = (): SimResponse => {
    const status = rng.pick([500, 502, 503] as const);
    if (status === 502) return { status, raw: { contentType: 'text/html', text: GATEWAY_PAGE } };
    if (status === 500) return codedError(500, 'A server error occurred.', 'common:server_error');
    return codedError(503, 'Service temporarily unavailable.', 'common:service_unavailable');
  };

  const rateLimited = (): SimResponse => {
    const seconds = options.retryAfterSec ?? 1;
    const retryAfter = rng.chance(0.25)
      ? new Date(clock.now() + seconds * 1000).toUTCString()
      : String(seconds);
    return json(
      429,
      {
        message: `Request was throttled. Expected available in ${seconds} seconds.`,
        code: 'common:throttled',
      },
      { 'Retry-After': retryAfter },
    );
  };

  return {
    set(next) {
      options = faultOptionsSchema.parse(next);
    },
    get: () => structuredClone(options),
    decide(endpoint) {
      if (options.gone?.includes(endpoint)) {
        const response = codedError(410, 'This endpoint is no longer available.', 'common:gone');
        return { fault: { kind: 'gone', response }, slowMs: 0 };
      }
      if (endpoint === 'token' && options.tokenOutage) {
        const response = json(503, {
          error: 'temporarily_unavailable',
          error_description: 'The authorization server is temporarily unavailable.',
        });
        return { fault: { kind: 'token_outage', response }, slowMs: 0 };
      }
      if (isOverLimit(endpoint)) {
        return { fault: { kind: 'rate_limit', response: rateLimited() }, slowMs: 0 };
      }
      if (options.endpoints && !options.endpoints.includes(endpoint)) {
        return { fault: { kind: 'none' }, slowMs: 0 };
      }
      const slowMs = options.slowMs && rng.chance(options.slowRate ?? 1) ? options.slowMs : 0;
      const rates: [FaultKind, number][] = [
        ['error', options.errorRate ?? 0],
        ['rate_limit', options.rateLimitRate ?? 0],
        ['drop', options.dropRate ?? 0],
        ['truncate', options.truncateRate ?? 0],
      ];
      if (rates.every(([, p]) => p === 0)) return { fault: { kind: 'none' }, slowMs };
      // One roll against stacked intervals, so the rates add up instead of shadowing each other.
      let roll = rng.next();
      for (const [kind, p] of rates) {
        if (roll < p) {
          if (kind === 'error') return { fault: { kind, response: serverError() }, slowMs };
          if (kind === 'rate_limit') return { fault: { kind, response: rateLimited() }, slowMs };
          return { fault: { kind: kind as 'drop' | 'truncate' }, slowMs };
        }
        roll -= p;
      }
      return { fault: { kind: 'none' }, slowMs };
    },
  };
}
