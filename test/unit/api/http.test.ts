import nock from 'nock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CallEvent, RetryEvent } from '../../../src/api/index.js';
import {
  base,
  createFakeClock,
  detailRecord,
  makeClient,
  mockToken,
  useNock,
  START_MS,
  caught,
  socketError,
} from '../../helpers/api.js';

const DETAIL = '/svc/openapi/v1.0/requests/K3J9QX2A/';
const LIST = '/svc/openapi/v1.0/requests/';

useNock();
beforeEach(() => mockToken());

describe('retries of reads', () => {
  it.each([429, 500, 502, 503, 504])('retries %i, then succeeds', async (status) => {
    base()
      .get(DETAIL)
      .reply(status, { message: 'busy' })
      .get(DETAIL)
      .reply(200, detailRecord('K3J9QX2A'));
    const { client, clock } = makeClient();
    await expect(client.getRequest('K3J9QX2A')).resolves.toMatchObject({ kind: 'ok' });
    expect(clock.sleeps).toEqual([250]);
    expect(nock.isDone()).toBe(true);
  });

  it.each([
    ['ECONNRESET', 'api.network'],
    ['ECONNREFUSED', 'api.network'],
    ['UND_ERR_SOCKET', 'api.network'],
    ['UND_ERR_HEADERS_TIMEOUT', 'api.timeout'],
  ])('retries a %s failure', async (code, errorCode) => {
    const events: CallEvent[] = [];
    base()
      .get(DETAIL)
      .replyWithError(socketError(code))
      .get(DETAIL)
      .reply(200, detailRecord('K3J9QX2A'));
    const { client } = makeClient({ onCall: (e) => events.push(e) });
    await expect(client.getRequest('K3J9QX2A')).resolves.toMatchObject({ kind: 'ok' });
    const detailEvents = events.filter((e) => e.endpoint === 'requests.detail');
    expect(detailEvents.map((e) => [e.status, e.errorCode])).toEqual([
      [null, errorCode],
      [200, undefined],
    ]);
  });

  it('retries a per-attempt timeout', async () => {
    // The second answer is immediate, yet must arrive within the attempt's limit on a busy
    // machine too: the limit is generous and the first answer far beyond it.
    base().get(DETAIL).delay(3000).reply(200, {}).get(DETAIL).reply(200, detailRecord('K3J9QX2A'));
    const events: CallEvent[] = [];
    const { client } = makeClient({ timeouts: { attemptMs: 500 }, onCall: (e) => events.push(e) });
    await expect(client.getRequest('K3J9QX2A')).resolves.toMatchObject({ kind: 'ok' });
    expect(events.map((e) => e.errorCode)).toEqual([undefined, 'api.timeout', undefined]);
    expect(nock.isDone()).toBe(true);
  });

  it('retries a truncated or unparsable 2xx body, then gives api.malformed_response', async () => {
    base().get(LIST).query(true).reply(200, '[{"id": "K3J9QX2A", "sta');
    base().get(LIST).query(true).reply(200, '');
    base().get(LIST).query(true).reply(200, '<html>proxy</html>');
    const { client, clock } = makeClient({ retry: { maxAttempts: 3 } });
    const error = await caught(client.listRequests({ from: 0, to: 1000, state: 'accepted' }));
    expect(error.code).toBe('api.malformed_response');
    expect(error.details).toMatchObject({ status: 200, attempts: 3, gaveUp: 'attempts' });
    expect(clock.sleeps).toHaveLength(2);
    expect(error.message).not.toContain('K3J9QX2A');
  });

  it('honours Retry-After in seconds', async () => {
    base()
      .get(DETAIL)
      .reply(429, {}, { 'Retry-After': '7' })
      .get(DETAIL)
      .reply(200, detailRecord('K3J9QX2A'));
    const limited: number[] = [];
    const { client, clock } = makeClient({ onRateLimitedMs: (ms) => limited.push(ms) });
    await client.getRequest('K3J9QX2A');
    expect(clock.sleeps).toEqual([7000]);
    expect(limited).toEqual([7000]);
  });

  it('honours Retry-After as an HTTP-date against the injected clock', async () => {
    const date = new Date(START_MS + 12_000).toUTCString();
    base()
      .get(DETAIL)
      .reply(503, {}, { 'Retry-After': date })
      .get(DETAIL)
      .reply(200, detailRecord('K3J9QX2A'));
    const { client, clock } = makeClient();
    await client.getRequest('K3J9QX2A');
    expect(clock.sleeps).toEqual([12_000]);
  });

  it('fails with api.rate_limited rather than sleep past the budget', async () => {
    base().get(DETAIL).reply(429, {}, { 'Retry-After': '120' });
    const { client, clock } = makeClient({ retry: { maxTotalMs: 60_000 } });
    const error = await caught(client.getRequest('K3J9QX2A'));
    expect(error.code).toBe('api.rate_limited');
    expect(error.isRetryable).toBe(true);
    expect(error.details).toMatchObject({ gaveUp: 'budget', retryAfterMs: 120_000, attempts: 1 });
    expect(clock.sleeps).toEqual([]);
  });

  it('stops at maxAttempts with the last error', async () => {
    base().get(DETAIL).times(4).reply(500, { message: 'oops', code: 'server:error' });
    const retries: RetryEvent[] = [];
    const { client, clock } = makeClient({
      retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 250 },
      onRetry: (e) => retries.push(e),
    });
    const error = await caught(client.getRequest('K3J9QX2A'));
    expect(error.code).toBe('api.server');
    expect(error.details).toMatchObject({ status: 500, attempts: 4, serviceCode: 'server:error' });
    expect(clock.sleeps).toEqual([50, 100, 125]); // 0.5 × min(250, 100 · 2^(n-1))
    expect(retries.map((r) => [r.attempt, r.status, r.errorCode, r.delayMs])).toEqual([
      [1, 500, 'api.server', 50],
      [2, 500, 'api.server', 100],
      [3, 500, 'api.server', 125],
    ]);
  });

  it('stops when the total time budget would be exceeded', async () => {
    base().get(DETAIL).times(3).reply(503);
    const { client, clock } = makeClient({
      random: () => 0.99,
      retry: { maxAttempts: 10, baseDelayMs: 1000, maxDelayMs: 100_000, maxTotalMs: 3000 },
    });
    const error = await caught(client.getRequest('K3J9QX2A'));
    expect(error.details).toMatchObject({ gaveUp: 'budget', attempts: 3 });
    expect(clock.sleeps).toEqual([990, 1980]); // a third sleep of 3960 ms would end past 3 s
  });

  it('full-jitter delays stay within their bounds with a real random source', async () => {
    base().get(DETAIL).times(5).reply(502);
    const { client, clock } = makeClient({
      random: Math.random,
      retry: { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 1000 },
    });
    await caught(client.getRequest('K3J9QX2A'));
    const ceilings = [200, 400, 800, 1000];
    expect(clock.sleeps).toHaveLength(4);
    clock.sleeps.forEach((delay, i) => {
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(ceilings[i]!);
    });
  });

  it.each([
    [400, 'api.invalid'],
    [403, 'api.not_available'],
    [404, 'api.not_found'],
    [410, 'api.gone'],
    [501, 'api.server'],
  ])('never retries %i', async (status, code) => {
    base().get(DETAIL).reply(status, { message: 'no', code: 'x:y' });
    const { client, clock } = makeClient();
    const error = await caught(client.getRequest('K3J9QX2A'));
    expect(error.code).toBe(code);
    expect(error.details.attempts).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('an abort by the caller ends the call with its reason and no retry', async () => {
    base().get(DETAIL).delay(200).reply(200, detailRecord('K3J9QX2A'));
    const { client } = makeClient();
    const controller = new AbortController();
    const call = client.getRequest('K3J9QX2A', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('shutting down')), 20);
    await expect(call).rejects.toThrow('shutting down');
  });

  it('an abort during a backoff sleep ends the call', async () => {
    base().get(DETAIL).reply(503);
    const controller = new AbortController();
    const clock = createFakeClock();
    const sleeping = {
      ...clock,
      sleep: (ms: number, signal?: AbortSignal) => {
        controller.abort(new Error('stop'));
        return clock.sleep(ms, signal);
      },
    };
    const { client } = makeClient({ clock: sleeping });
    await expect(client.getRequest('K3J9QX2A', { signal: controller.signal })).rejects.toThrow(
      'stop',
    );
  });

  it('reports every attempt to onCall with status and attempt number', async () => {
    base().get(DETAIL).reply(503).get(DETAIL).reply(200, detailRecord('K3J9QX2A'));
    const events: CallEvent[] = [];
    const { client } = makeClient({ onCall: (e) => events.push(e) });
    await client.getRequest('K3J9QX2A');
    expect(
      events.map(({ endpoint, method, status, attempt }) => ({
        endpoint,
        method,
        status,
        attempt,
      })),
    ).toEqual([
      { endpoint: 'token', method: 'POST', status: 200, attempt: 1 },
      { endpoint: 'requests.detail', method: 'GET', status: 503, attempt: 1 },
      { endpoint: 'requests.detail', method: 'GET', status: 200, attempt: 2 },
    ]);
    expect(events[1]?.errorCode).toBe('api.server');
    expect(events.every((e) => typeof e.durationMs === 'number')).toBe(true);
  });

  it('a redirect is not followed', async () => {
    base().get(DETAIL).reply(301, '', { Location: 'https://elsewhere.example/' });
    const { client } = makeClient();
    const error = await caught(client.getRequest('K3J9QX2A'));
    expect(error.code).toBe('api.unexpected_status');
    expect(error.details.status).toBe(301);
  });
});

describe('limits', () => {
  it('never has more than `concurrency` attempts in flight, retries included', async () => {
    let arrived = 0;
    let done = 0;
    let maxInFlight = 0;
    const path = /\/svc\/openapi\/v1\.0\/requests\/R\d+\//;
    base()
      .get(path)
      .times(12)
      .delay(15)
      .reply(() => {
        arrived += 1;
        maxInFlight = Math.max(maxInFlight, arrived - done);
        return [arrived % 3 === 0 ? 503 : 200, detailRecord('R1')];
      });
    base().get(path).times(10).reply(200, detailRecord('R1'));
    const { client } = makeClient({
      concurrency: 3,
      onCall: (e) => {
        if (e.endpoint === 'requests.detail') done += 1;
      },
    });
    await Promise.all(Array.from({ length: 10 }, (_, i) => client.getRequest(`R${i}`)));
    expect(maxInFlight).toBeLessThanOrEqual(3);
    expect(maxInFlight).toBeGreaterThanOrEqual(2);
  });

  it('applies the rate limit to every attempt, retries included', async () => {
    base().get(DETAIL).reply(503).get(DETAIL).reply(200, detailRecord('K3J9QX2A'));
    const waits: number[] = [];
    const clock = createFakeClock();
    const frozen = { now: () => START_MS, sleep: clock.sleep }; // time never moves on its own
    const { client } = makeClient({
      clock: frozen,
      rateLimitPerSec: 5,
      onRateLimitedMs: (ms) => waits.push(ms),
    });
    await client.getRequest('K3J9QX2A');
    // token call, first attempt, retry: second and third each wait for their token (200 ms apart).
    expect(waits).toEqual([200, 400]);
  });
});
