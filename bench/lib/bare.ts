import { Agent } from 'undici';
import { DEFAULT_TIMEOUTS } from '../../src/api/index.js';
import type { SimCall } from './sim-protocol.js';

/**
 * The bare cost of calls: the same URLs over the same transport (Node's fetch with an undici
 * Agent configured as the client's), the body read and JSON-parsed, nothing else: no
 * validation, no limiter, no database. The floor our client and engine sit on.
 *
 * One retry it does make, as the client does: a GET whose connection failed (fetch's "fetch
 * failed", such as a kept-alive socket the server closed as it was reused) is sent again, up to
 * CONNECTION_RETRIES times. A full bench run once lost an engine's rows 5 and 8 to one such
 * failure. A status other than 200 still fails the replay.
 */
export interface BareClient {
  /** GETs each URL and parses its JSON; `concurrency` at once, in order of start. */
  replay(urls: readonly string[], concurrency?: number): Promise<number>;
  /** GETs sent again after their connection failed, over the client's life. */
  readonly retries: number;
  close(): Promise<void>;
}

const CONNECTION_RETRIES = 2;

/** URLs of the recorded calls to the API (token calls left out), against `baseUrl`. */
export function replayUrls(baseUrl: string, calls: readonly SimCall[]): string[] {
  return calls
    .filter((call) => call.endpoint !== 'token' && call.status === 200)
    .map((call) => {
      const query = new URLSearchParams(call.query).toString();
      return `${baseUrl}${call.path}${query ? `?${query}` : ''}`;
    });
}

/** A bare client sending `token` as its bearer. */
export function createBareClient(token: string): BareClient {
  const agent = new Agent({
    keepAliveTimeout: DEFAULT_TIMEOUTS.keepAliveMs,
    connectTimeout: DEFAULT_TIMEOUTS.connectMs,
    headersTimeout: DEFAULT_TIMEOUTS.headersMs,
    bodyTimeout: DEFAULT_TIMEOUTS.bodyMs,
  });
  const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
  let retries = 0;
  const send = async (url: string, init: RequestInit, retriesLeft: number): Promise<Response> => {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (retriesLeft === 0) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        throw new Error(
          `bare GET ${url}: ${String(error)} (${cause?.code ?? cause?.message ?? 'no cause'}), after ${CONNECTION_RETRIES} retries`,
          { cause: error },
        );
      }
      retries += 1;
      return send(url, init, retriesLeft - 1);
    }
  };
  const get = async (url: string): Promise<unknown> => {
    const init: RequestInit = { headers };
    // As in src/api/attempt.ts: Node's fetch accepts the undici 7 Agent at run time.
    (init as { dispatcher?: unknown }).dispatcher = agent;
    const response = await send(url, init, CONNECTION_RETRIES);
    const text = await response.text();
    if (response.status !== 200) throw new Error(`bare GET ${url}: ${response.status}`);
    return JSON.parse(text);
  };
  return {
    async replay(urls, concurrency = 1) {
      let next = 0;
      let parsed = 0;
      const worker = async () => {
        while (next < urls.length) {
          const body = await get(urls[next++]!);
          if (body !== undefined) parsed += 1;
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, urls.length) }, worker));
      return parsed;
    },
    get retries() {
      return retries;
    },
    close: () => agent.close(),
  };
}
