import type { Clock } from '../clock.js';
import { describeError, isTransportError, TransportError } from '../errors.js';
import type { Logger } from '../log.js';
import { errorFromStatus, invalidClient, malformedResponse, tokenUnavailable } from './errors.js';
import type { HttpClient, HttpRequest, HttpResponse } from './http.js';
import { tokenResponseSchema } from './schemas.js';
import { joinUrl, paths } from './urls.js';

/**
 * OAuth client-credentials token with caching, refresh at 80 % of its lifetime, single-flight
 * refresh, and the one-retry-on-401 rule. Only `api.invalid_client` and `api.token_unavailable`
 * leave this file (or the caller's abort reason).
 */

/** Supplies bearer tokens. */
export interface TokenManager {
  /** A token valid now; fetches one when none is cached or the cached one is due for refresh. */
  getToken(signal?: AbortSignal): Promise<string>;
  /** Drops `token` after a 401; a no-op when another caller already replaced it. */
  invalidate(token: string): void;
}

/** Options of `createTokenManager`. */
export interface TokenManagerOptions {
  http: HttpClient;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  clock: Clock;
  log: Logger;
  /** Share of the lifetime after which a token is refreshed (default 0.8). */
  refreshFraction?: number;
}

interface CachedToken {
  token: string;
  refreshAtMs: number;
  expiresAtMs: number;
}

// After a failed refresh, an unexpired token is used this long before the next refresh attempt,
// so callers do not each wait out a full retry cycle while the token endpoint is down.
const REFRESH_RETRY_MS = 30_000;

/** Creates the token manager. */
export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const { http, clock } = options;
  const log = options.log.child({ area: 'api' });
  const fraction = options.refreshFraction ?? 0.8;
  const tokenUrl = joinUrl(options.authUrl, paths.token());
  let cached: CachedToken | null = null;
  let inflight: Promise<CachedToken> | null = null;

  async function fetchToken(): Promise<CachedToken> {
    // Lifetime counts from before the request: the token may have been issued at any moment since.
    const sentAtMs = clock.now();
    let response: HttpResponse;
    try {
      response = await http.request({
        endpoint: 'token',
        method: 'POST',
        url: tokenUrl,
        form: {
          client_id: options.clientId,
          client_secret: options.clientSecret,
          grant_type: 'client_credentials',
        },
        retry: 'always', // a second token request only issues a second token
        responseBody: 'required',
        mapError: (status, body) => mapTokenError(status, body),
      });
    } catch (error) {
      if (isTransportError(error, 'api.invalid_client')) throw error;
      if (isTransportError(error, 'api.token_unavailable')) throw error;
      if (!(error instanceof TransportError)) throw error;
      throw tokenUnavailable(error, error.isRetryable);
    }
    const parsed = tokenResponseSchema.safeParse(response.body);
    if (!parsed.success) {
      const members = parsed.error.issues.map((issue) => issue.path.join('.')).join(', ');
      const ctx = { endpoint: 'token', method: 'POST' };
      throw tokenUnavailable(malformedResponse(ctx, response.status, `bad members: ${members}`));
    }
    const lifetimeMs = parsed.data.expires_in * 1000;
    log.debug({ expiresInSec: parsed.data.expires_in }, 'token obtained');
    return {
      token: parsed.data.access_token,
      refreshAtMs: sentAtMs + lifetimeMs * fraction,
      expiresAtMs: sentAtMs + lifetimeMs,
    };
  }

  function refresh(): Promise<CachedToken> {
    // Single flight: every caller that finds the token due shares one request.
    inflight ??= fetchToken()
      .then((fresh) => (cached = fresh))
      .finally(() => {
        inflight = null;
      });
    return inflight;
  }

  return {
    async getToken(signal) {
      if (cached && clock.now() < cached.refreshAtMs) return cached.token;
      try {
        return (await untilAborted(refresh(), signal)).token;
      } catch (error) {
        if (signal?.aborted) throw error;
        if (isTransportError(error, 'api.invalid_client')) {
          cached = null;
          throw error;
        }
        const stale = cached;
        const now = clock.now();
        if (stale && now < stale.expiresAtMs) {
          log.warn(describeError(error), 'token refresh failed, using unexpired token');
          cached = { ...stale, refreshAtMs: Math.min(stale.expiresAtMs, now + REFRESH_RETRY_MS) };
          return stale.token;
        }
        throw error;
      }
    },
    invalidate(token) {
      if (cached?.token === token) cached = null;
    },
  };
}

function mapTokenError(status: number, body: unknown): TransportError {
  const error = (body as { error?: unknown } | undefined)?.error;
  if (status === 401 || error === 'invalid_client') return invalidClient(status, body);
  // Other 4xx (unsupported_grant_type, a wrong auth URL's 404) will not heal by retrying.
  const ctx = { endpoint: 'token', method: 'POST' };
  return tokenUnavailable(errorFromStatus({ status, body, ctx, scope: 'item' }), false);
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  // The shared refresh keeps running for the other callers; only this caller stops waiting.
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Sends API requests with a bearer token, and once more with a fresh token after a 401. */
export type AuthorizedSend = (req: HttpRequest) => Promise<HttpResponse>;

/** Wraps the HTTP layer with the token. */
export function createAuthorizedSend(http: HttpClient, tokens: TokenManager): AuthorizedSend {
  const withBearer = (req: HttpRequest, token: string): HttpRequest => ({
    ...req,
    headers: { ...req.headers, authorization: `Bearer ${token}` },
  });
  return async (req) => {
    const token = await tokens.getToken(req.signal);
    try {
      return await http.request(withBearer(req, token));
    } catch (error) {
      if (!isTransportError(error, 'api.unauthorized')) throw error;
      // A 401 is decided before the handler runs, so even an action may be sent again; once.
      tokens.invalidate(token);
      const fresh = await tokens.getToken(req.signal);
      try {
        return await http.request(withBearer(req, fresh));
      } catch (second) {
        if (isTransportError(second, 'api.unauthorized')) second.details.isAfterRefresh = true;
        throw second;
      }
    }
  };
}
