import nock from 'nock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  hub,
  makeClient,
  mockToken,
  useNock,
  TOKEN_2,
  caught,
  socketError,
} from '../../helpers/api.js';

const ACCEPT = '/api/openapi/v2.0/requests/K3J9QX2A/accept/';
const LOCATIONS = '/api/openapi/v2.0/requests/K3J9QX2A/locations/';

const sample = (i: number) => ({
  lat: 40 + i / 1000,
  lng: -74,
  alt: 10,
  timestamp: 1769605200 + i,
});

useNock();

describe('non-idempotent actions are retried only when certainly not processed', () => {
  beforeEach(() => mockToken());

  it.each([
    ['429', () => hub().put(ACCEPT).reply(429, {}, { 'Retry-After': '2' })],
    ['503 with Retry-After', () => hub().put(ACCEPT).reply(503, {}, { 'Retry-After': '3' })],
    ['connection refused', () => hub().put(ACCEPT).replyWithError(socketError('ECONNREFUSED'))],
    ['DNS failure', () => hub().put(ACCEPT).replyWithError(socketError('ENOTFOUND'))],
  ])('retries after %s', async (_name, fail) => {
    fail();
    hub().put(ACCEPT).reply(201, { response_notes: 'ok' });
    const { client, clock } = makeClient();
    await expect(client.accept('K3J9QX2A', { responseNotes: 'ok' })).resolves.toEqual({
      responseNotes: 'ok',
    });
    expect(clock.sleeps).toHaveLength(1);
    expect(nock.isDone()).toBe(true);
  });

  it.each([
    ['500', () => hub().put(ACCEPT).reply(500), 'api.server'],
    ['502', () => hub().put(ACCEPT).reply(502), 'api.server'],
    ['503 without Retry-After', () => hub().put(ACCEPT).reply(503), 'api.server'],
    ['504', () => hub().put(ACCEPT).reply(504), 'api.server'],
    [
      'a reset connection',
      () => hub().put(ACCEPT).replyWithError(socketError('ECONNRESET')),
      'api.network',
    ],
    [
      'a closed socket',
      () => hub().put(ACCEPT).replyWithError(socketError('UND_ERR_SOCKET')),
      'api.network',
    ],
    [
      'a body timeout',
      () => hub().put(ACCEPT).replyWithError(socketError('UND_ERR_BODY_TIMEOUT')),
      'api.timeout',
    ],
  ])('does not retry after %s; the outcome is unknown', async (_name, fail, code) => {
    fail();
    const { client, clock } = makeClient();
    const error = await caught(client.accept('K3J9QX2A'));
    expect(error.code).toBe(code);
    expect(error.details).toMatchObject({
      isOutcomeUnknown: true,
      attempts: 1,
      requestId: 'K3J9QX2A',
    });
    expect(error.isRetryable).toBe(true);
    expect(clock.sleeps).toEqual([]);
  });

  it('does not resend a location batch after an attempt timeout', async () => {
    // The token call before it must fit the attempt's limit on a busy machine too: the limit is
    // generous, the answer far beyond it.
    hub().post(LOCATIONS).delay(3000).reply(200, {});
    const { client } = makeClient({ timeouts: { attemptMs: 500 } });
    const error = await caught(client.sendLocations('K3J9QX2A', [sample(1)]));
    expect(error.code).toBe('api.timeout');
    expect(error.details).toMatchObject({ isOutcomeUnknown: true, deliveredSamples: 0 });
  });

  it('a 2xx with an unreadable body is success (the action happened)', async () => {
    hub().put(ACCEPT).reply(201, '{"response_no');
    hub().post('/api/openapi/v2.0/requests/K3J9QX2A/state/').reply(201, '');
    const { client, clock } = makeClient();
    await expect(client.accept('K3J9QX2A', { responseNotes: 'sent' })).resolves.toEqual({
      responseNotes: 'sent',
    });
    await client.sendState('K3J9QX2A', { name: 'en_route', timestamp: '2026-01-28T12:00:00Z' });
    expect(clock.sleeps).toEqual([]);
  });

  it('a 401 is retried once with a fresh token (it is decided before the handler runs)', async () => {
    mockToken(TOKEN_2);
    hub().put(ACCEPT).reply(401, { code: 'members:not_authenticated' });
    hub()
      .put(ACCEPT)
      .matchHeader('authorization', `Bearer ${TOKEN_2}`)
      .reply(201, { response_notes: null });
    const { client } = makeClient();
    await expect(client.accept('K3J9QX2A')).resolves.toEqual({ responseNotes: null });
    expect(nock.isDone()).toBe(true);
  });

  it('a stale state timestamp (400) is not retried', async () => {
    hub()
      .post('/api/openapi/v2.0/requests/K3J9QX2A/state/')
      .reply(400, {
        timestamp: [{ message: 'Timestamp is older than 7 days.', code: 'common:invalid' }],
      });
    const { client, clock } = makeClient();
    const error = await caught(
      client.sendState('K3J9QX2A', { name: 'arrived', timestamp: '2026-01-01T00:00:00Z' }),
    );
    expect(error.code).toBe('api.invalid');
    expect(error.details.isOutcomeUnknown).toBeUndefined();
    expect(clock.sleeps).toEqual([]);
  });
});

describe('client-side validation (nothing is sent)', () => {
  // No interceptors and no token: any request would fail with a different code.
  const { client } = makeClient();
  const invalid = { code: 'api.invalid_argument', isRetryable: false };

  it('notes and reasons over 450 characters', async () => {
    await expect(client.accept('A', { responseNotes: 'x'.repeat(451) })).rejects.toMatchObject(
      invalid,
    );
    await expect(client.decline('A', { responseNotes: 'x'.repeat(451) })).rejects.toMatchObject(
      invalid,
    );
    await expect(
      client.changeRequest('A', {
        agreedDt: '2026-01-28T12:00:00Z',
        changeReason: 'x'.repeat(451),
      }),
    ).rejects.toMatchObject(invalid);
    await expect(
      client.changeRequest('A', { agreedDt: '2026-01-28T12:00:00Z', changeReason: '  ' }),
    ).rejects.toMatchObject(invalid);
  });

  it('counts characters, not UTF-16 units', async () => {
    mockToken();
    hub().put('/api/openapi/v2.0/requests/A/accept/').reply(201, {});
    const notes = '🚑'.repeat(450); // 900 UTF-16 units, 450 characters
    await expect(client.accept('A', { responseNotes: notes })).resolves.toEqual({
      responseNotes: notes,
    });
  });

  it('unknown state names and unreadable times', async () => {
    await expect(
      client.sendState('A', { name: 'teleported' as 'arrived', timestamp: new Date() }),
    ).rejects.toMatchObject(invalid);
    await expect(
      client.sendState('A', { name: 'arrived', timestamp: 'yesterday' }),
    ).rejects.toMatchObject(invalid);
    await expect(client.bestTime('A', { proposedAgreedDt: new Date(NaN) })).rejects.toMatchObject(
      invalid,
    );
  });

  it.each([
    ['missing alt', { lat: 1, lng: 2, timestamp: 1769605200 }],
    ['NaN lat', { lat: NaN, lng: 2, alt: 3, timestamp: 1769605200 }],
    ['infinite lng', { lat: 1, lng: Infinity, alt: 3, timestamp: 1769605200 }],
    ['latitude out of range', { lat: 91, lng: 2, alt: 3, timestamp: 1769605200 }],
    ['milliseconds timestamp', { lat: 1, lng: 2, alt: 3, timestamp: 1769605200000 }],
    ['missing timestamp', { lat: 1, lng: 2, alt: 3 }],
  ])('location samples: %s', async (_name, bad) => {
    const samples = [sample(0), bad as ReturnType<typeof sample>];
    const error = await caught(client.sendLocations('A', samples));
    expect(error.code).toBe('api.invalid_argument');
    expect(error.details.sampleIndex).toBe(1);
    expect(error.message).not.toMatch(/\d{3,}/); // names members, never values
  });
});

describe('location batching', () => {
  beforeEach(() => mockToken());

  it('450 samples go as 200, 200, 50, in order, one after another', async () => {
    const bodies: Array<Array<{ timestamp: number }>> = [];
    let inFlight = 0;
    let maxInFlight = 0;
    hub()
      .post(LOCATIONS)
      .times(3)
      .delay(5)
      .reply((_uri, body) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        bodies.push(body as Array<{ timestamp: number }>);
        setTimeout(() => (inFlight -= 1), 1);
        return [200, {}];
      });
    const samples = Array.from({ length: 450 }, (_, i) => sample(i));
    const { client } = makeClient({ concurrency: 4 });
    await expect(client.sendLocations('K3J9QX2A', samples)).resolves.toEqual({ batches: 3 });
    expect(bodies.map((b) => b.length)).toEqual([200, 200, 50]);
    expect(bodies.flat().map((s) => s.timestamp)).toEqual(samples.map((s) => s.timestamp));
    expect(maxInFlight).toBe(1);
  });

  it('a failed batch reports how many samples were delivered before it, and stops', async () => {
    hub().post(LOCATIONS).reply(200, {});
    hub()
      .post(LOCATIONS)
      .reply(400, [{}, { alt: [{ message: 'This field is required.', code: 'common:required' }] }]);
    const samples = Array.from({ length: 450 }, (_, i) => sample(i));
    const { client } = makeClient();
    const error = await caught(client.sendLocations('K3J9QX2A', samples));
    expect(error.code).toBe('api.invalid');
    expect(error.details).toMatchObject({
      deliveredSamples: 200,
      failedBatch: 1,
      batchOffset: 200,
    });
    expect(nock.isDone()).toBe(true); // the third batch was never sent (no interceptor for it)
  });

  it('drops a null speed and members the service does not know', async () => {
    let body: unknown;
    hub()
      .post(LOCATIONS)
      .reply((_uri, b) => {
        body = b;
        return [200, {}];
      });
    const { client } = makeClient();
    const extra = { ...sample(1), speed: null, driver_name: 'Pat' };
    await client.sendLocations('K3J9QX2A', [extra]);
    expect(body).toEqual([{ lat: 40.001, lng: -74, alt: 10, timestamp: 1769605201 }]);
  });

  it('no samples, no call', async () => {
    nock.cleanAll();
    const { client } = makeClient();
    await expect(client.sendLocations('K3J9QX2A', [])).resolves.toEqual({ batches: 0 });
  });
});
