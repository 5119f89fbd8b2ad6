import type { Clock } from '../clock.js';
import type { TransportError } from '../errors.js';
import type { Logger } from '../log.js';
import { createWire, type ResponseHeaders } from '../wire.js';
import { attemptOnce, type AttemptDeps } from './attempt.js';
import type { CallContext, NotFoundScope } from './errors.js';
import { createLimiter, type Limiter } from './limiter.js';
import { decideRetry, resolveRetryPolicy, type RetryPolicy } from './retry.js';
import { pathOf } from './urls.js';

/**
 * How a request may be repeated after a failure.
 *
 * - `always`: reads and the token request. Repeating them changes nothing on the service, so
 *   every transient failure is retried: 429, 500/502/503/504, network errors, timeouts, and a
 *   2xx whose JSON body is truncated or unparsable.
 * - `safe-only`: provider actions (accept, decline, state, change-request, best-time,
 *   locations). A repeat after the service processed the first one is not harmless (what each
 *   repeat does at the service is in docs/outbox.md, with the delivery guarantee this serves), so
 *   these are retried only when the service certainly did not process the request:
 *     - the connection was never established (refused, DNS, unreachable, connect timeout);
 *     - 429: rate limiting rejects a request before it is handled;
 *     - 503 with Retry-After: the explicit "not served, come back later" of maintenance and load
 *       shedding. A bare 503, 500, 502 and 504 may come after the handler ran (504 means the
 *       gateway stopped waiting, not that the service stopped working).
 *   Everything else (reset, socket closed, timeouts after sending, 5xx) ends the call with
 *   `details.isOutcomeUnknown = true`, so the outbox can read the request back before deciding
 *   to resend. A 2xx is success even when its body is unreadable: the action happened.
 * 400, 401, 403, 404 and 410 are never retried here; a 401 is the token layer's business.
 */
export type RetryMode = 'always' | 'safe-only';

/** One logical call; the HTTP layer may make several attempts of it. */
export interface HttpRequest {
  /** Stable endpoint name for logs and metrics, e.g. `requests.detail`. */
  endpoint: string;
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string>;
  retry: RetryMode;
  /** `required`: a 2xx must carry JSON (reads). `optional`: an empty or odd body is accepted. */
  responseBody: 'required' | 'optional';
  /** `collection` for list endpoints: 404/410 there means the endpoint is gone. */
  notFoundScope?: NotFoundScope;
  requestId?: string;
  signal?: AbortSignal;
  /** Maps a final non-retryable non-2xx response to an error before the default mapping. */
  mapError?: (status: number, body: unknown) => TransportError | undefined;
  /**
   * Shown a 2xx body's bytes before they are decoded and parsed. What it returns, when not
   * undefined, is the response's body instead of the parsed JSON: a caller that has read these
   * very bytes before spares the decoding and the parse.
   */
  reuse?: (body: Uint8Array) => unknown;
}

/** A 2xx response with its parsed JSON body (undefined when empty and allowed to be). */
export interface HttpResponse {
  status: number;
  headers: ResponseHeaders;
  body: unknown;
  attempts: number;
  /** Our clock when the answering attempt was sent, and when its answer arrived (epoch ms). */
  sentAtMs: number;
  receivedAtMs: number;
}

/** Reported after every attempt. */
export interface CallEvent {
  endpoint: string;
  method: string;
  status: number | null;
  attempt: number;
  durationMs: number;
  errorCode?: string;
}

/** Reported before every retry sleep. */
export interface RetryEvent {
  endpoint: string;
  method: string;
  /** The attempt that failed. */
  attempt: number;
  delayMs: number;
  status: number | null;
  errorCode: string;
}

/** Connection and per-attempt time limits. */
export interface HttpTimeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
  keepAliveMs: number;
  /** Whole attempt, from sending to the last body byte. */
  attemptMs: number;
}

/** Defaults: connect 10 s, headers 30 s, body 30 s, attempt 60 s, idle keep-alive 4 s. */
export const DEFAULT_TIMEOUTS: HttpTimeouts = {
  connectMs: 10_000,
  headersMs: 30_000,
  bodyMs: 30_000,
  keepAliveMs: 4_000,
  attemptMs: 60_000,
};

/** Options of `createHttp`. */
export interface HttpOptions {
  clock: Clock;
  log: Logger;
  random?: () => number;
  retry?: Partial<RetryPolicy>;
  timeouts?: Partial<HttpTimeouts>;
  rateLimitPerSec?: number;
  concurrency?: number;
  userAgent?: string;
  onCall?: (event: CallEvent) => void;
  onRetry?: (event: RetryEvent) => void;
  onRateLimitedMs?: (ms: number) => void;
}

/** The HTTP layer: retries, limits, timeouts, logging. */
export interface HttpClient {
  /** Sends `req`, retrying per its mode; resolves with a 2xx or throws a TransportError. */
  request(req: HttpRequest): Promise<HttpResponse>;
  readonly limiter: Limiter;
  /** Closes the connection pool. */
  close(): Promise<void>;
}

/** Creates the HTTP layer; all attempts go through node:http and node:https (src/wire.ts). */
export function createHttp(options: HttpOptions): HttpClient {
  const { clock } = options;
  const log = options.log.child({ area: 'api' });
  const random = options.random ?? Math.random;
  const policy = resolveRetryPolicy(options.retry);
  const timeouts = { ...DEFAULT_TIMEOUTS, ...definedOnly(options.timeouts ?? {}) };
  const wire = createWire({ connectMs: timeouts.connectMs, keepAliveMs: timeouts.keepAliveMs });
  const limiter = createLimiter({
    clock,
    rateLimitPerSec: options.rateLimitPerSec ?? 0,
    concurrency: options.concurrency ?? 4,
    ...(options.onRateLimitedMs && { onRateLimitedMs: options.onRateLimitedMs }),
  });
  const attemptDeps: AttemptDeps = {
    clock,
    log,
    wire,
    timeouts,
    userAgent: options.userAgent ?? 'transport-sync',
  };

  async function request(req: HttpRequest): Promise<HttpResponse> {
    const ctx: CallContext = {
      endpoint: req.endpoint,
      method: req.method,
      requestId: req.requestId,
    };
    const path = pathOf(req.url);
    const startedAt = clock.now();
    for (let attempt = 1; ; attempt += 1) {
      if (req.signal?.aborted) throw req.signal.reason;
      let attemptStart = 0;
      const result = await limiter.run(() => {
        attemptStart = clock.now();
        return attemptOnce(req, ctx, attemptDeps);
      }, req.signal);
      const durationMs = clock.now() - attemptStart;
      const status = result.kind === 'ok' ? result.response.status : result.status;
      // The service's only word on our rate: 429, or 503 with Retry-After, slows every caller.
      const isThrottled =
        result.kind === 'fail' &&
        (result.status === 429 || (result.status === 503 && result.retryAfterMs !== null));
      if (isThrottled) limiter.onThrottled(result.retryAfterMs);
      else if (status !== null) limiter.onAnswered();
      const errorCode = result.kind === 'fail' ? result.error.code : undefined;
      const event = { endpoint: req.endpoint, method: req.method, status, attempt, durationMs };
      options.onCall?.(errorCode ? { ...event, errorCode } : event);
      log.debug({ ...event, path, ...(errorCode && { errorCode }) }, 'api call');
      if (result.kind === 'ok') {
        return {
          ...result.response,
          attempts: attempt,
          sentAtMs: attemptStart,
          receivedAtMs: attemptStart + durationMs,
        };
      }

      const { error } = result;
      const mayRetry = result.isTransient && (req.retry === 'always' || result.isUnprocessed);
      if (!mayRetry) {
        const isOutcomeUnknown = req.retry === 'safe-only' && result.isTransient;
        throw annotate(error, { attempts: attempt, ...(isOutcomeUnknown && { isOutcomeUnknown }) });
      }
      const decision = decideRetry({
        attempt,
        elapsedMs: clock.now() - startedAt,
        retryAfterMs: result.retryAfterMs,
        policy,
        random,
      });
      if (decision.kind === 'give_up') {
        throw annotate(error, {
          attempts: attempt,
          gaveUp: decision.reason,
          ...(result.retryAfterMs !== null && { retryAfterMs: result.retryAfterMs }),
        });
      }
      const retryEvent: RetryEvent = {
        endpoint: req.endpoint,
        method: req.method,
        attempt,
        delayMs: decision.delayMs,
        status,
        errorCode: error.code,
      };
      options.onRetry?.(retryEvent);
      log.warn({ ...retryEvent, path }, 'api call failed, retrying');
      if (result.status === 429) options.onRateLimitedMs?.(decision.delayMs);
      await clock.sleep(decision.delayMs, req.signal);
    }
  }

  return {
    request,
    limiter,
    async close() {
      wire.close();
    },
  };
}

function annotate(error: TransportError, extra: Record<string, unknown>): TransportError {
  Object.assign(error.details, extra);
  return error;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
