import type { Clock } from '../clock.js';
import type { TransportError } from '../errors.js';
import type { Logger } from '../log.js';
import { attemptTimers, type AttemptTimers, type Wire, type WireResponse } from '../wire.js';
import {
  errorFromStatus,
  malformedResponse,
  networkError,
  timeoutError,
  type CallContext,
} from './errors.js';
import { classifyThrown } from './failures.js';
import type { HttpRequest, HttpResponse, HttpTimeouts } from './http.js';
import { parseRetryAfter } from './retry.js';

/**
 * One attempt of a request: send it, read the body, and say what the outcome means for retrying
 * (whether it is transient, and whether the service certainly did not process it). The retry loop
 * in http.ts decides with these facts and the request's retry mode.
 */

/** The outcome of one attempt. */
export type Attempt =
  | { kind: 'ok'; response: Omit<HttpResponse, 'attempts' | 'sentAtMs' | 'receivedAtMs'> }
  | {
      kind: 'fail';
      error: TransportError;
      status: number | null;
      isTransient: boolean;
      /** The service certainly did not process the request. */
      isUnprocessed: boolean;
      retryAfterMs: number | null;
    };

/** What an attempt needs from the HTTP layer. */
export interface AttemptDeps {
  clock: Clock;
  log: Logger;
  /** The connection pool the attempt is sent on. */
  wire: Wire;
  timeouts: HttpTimeouts;
  userAgent: string;
}

/** Makes one attempt of `req` and classifies the outcome; throws only the caller's abort reason. */
export async function attemptOnce(
  req: HttpRequest,
  ctx: CallContext,
  deps: AttemptDeps,
): Promise<Attempt> {
  const { timeouts } = deps;
  // Real time, not the injected clock: these bound real I/O, and fake clocks never fire.
  const timers = attemptTimers(
    timeouts.attemptMs,
    timeouts.headersMs,
    'UND_ERR_HEADERS_TIMEOUT',
    req.signal,
  );
  try {
    return await attemptWithin(req, ctx, deps, timers);
  } finally {
    timers.stop();
  }
}

async function attemptWithin(
  req: HttpRequest,
  ctx: CallContext,
  deps: AttemptDeps,
  timers: AttemptTimers,
): Promise<Attempt> {
  const { signal } = timers;
  const { timeouts, userAgent, wire, clock, log } = deps;
  const headers: Record<string, string> = {
    accept: 'application/json',
    'user-agent': userAgent,
    ...req.headers,
  };
  let body: string | undefined;
  if (req.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(req.json);
  } else if (req.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(req.form).toString();
  }
  const thrown = (error: unknown): Attempt => {
    if (req.signal?.aborted) throw req.signal.reason; // the caller's abort is not a failure
    const failure = classifyThrown(error, timers.isTimedOut);
    const extra = { ...(failure.errno !== undefined && { errno: failure.errno }) };
    return {
      kind: 'fail',
      error:
        failure.kind === 'timeout'
          ? timeoutError(ctx, error, extra)
          : networkError(ctx, error, extra, failure.isTransient),
      status: null,
      isTransient: failure.isTransient,
      isUnprocessed: failure.isUnsent,
      retryAfterMs: null,
    };
  };

  let response: WireResponse;
  try {
    // No redirect is followed: the service does not redirect API calls, and following one could
    // turn a POST into a GET or carry the bearer header elsewhere. A 3xx is an error status.
    response = await wire.send({ url: req.url, method: req.method, headers, body, signal });
  } catch (error) {
    return thrown(error);
  }
  const { status } = response;
  const isSuccess = status >= 200 && status < 300;
  let bytes: Uint8Array;
  try {
    timers.restart(timeouts.bodyMs, 'UND_ERR_BODY_TIMEOUT');
    bytes = await response.readBody(timers);
  } catch (error) {
    // A 2xx status means the service did the work; only the echo was lost.
    if (isSuccess && req.responseBody === 'optional') {
      return { kind: 'ok', response: { status, headers: response.headers, body: undefined } };
    }
    if (isSuccess) return thrown(error);
    if (req.signal?.aborted) throw req.signal.reason;
    bytes = new Uint8Array(); // the status alone decides an error response
  }
  // Before the body is decoded: a body the caller has read before is neither decoded nor parsed.
  const reused = isSuccess ? req.reuse?.(bytes) : undefined;
  if (reused !== undefined) {
    return { kind: 'ok', response: { status, headers: response.headers, body: reused } };
  }
  const text = decodeBody(bytes);
  const parsed = parseJson(text);

  if (isSuccess) {
    if (parsed.ok) {
      return { kind: 'ok', response: { status, headers: response.headers, body: parsed.value } };
    }
    if (req.responseBody === 'optional') {
      if (text.trim() !== '') log.warn({ endpoint: ctx.endpoint, status }, 'unreadable body');
      return { kind: 'ok', response: { status, headers: response.headers, body: undefined } };
    }
    const reason = text.trim() === '' ? 'empty body' : 'body is not valid JSON';
    return {
      kind: 'fail',
      error: malformedResponse(ctx, status, reason),
      status,
      isTransient: true,
      isUnprocessed: false,
      retryAfterMs: null,
    };
  }

  const errorBody = parsed.ok ? parsed.value : undefined;
  const isTransient = status === 429 || (status >= 500 && status <= 504 && status !== 501);
  const retryAfterMs =
    status === 429 || status === 503
      ? parseRetryAfter(response.headers.get('retry-after'), clock.now())
      : null;
  const mapped = isTransient ? undefined : req.mapError?.(status, errorBody);
  const scope = req.notFoundScope ?? 'item';
  return {
    kind: 'fail',
    error: mapped ?? errorFromStatus({ status, body: errorBody, ctx, scope }),
    status,
    isTransient,
    isUnprocessed: status === 429 || (status === 503 && retryAfterMs !== null),
    retryAfterMs,
  };
}

const UTF8 = new TextDecoder();

/**
 * A body's text, decoded as Response.text() decodes it: UTF-8, a byte order mark dropped, bad
 * bytes replaced.
 */
export const decodeBody = (bytes: Uint8Array): string => UTF8.decode(bytes);

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
