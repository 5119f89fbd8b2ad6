import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { createHttp } from '../../../src/api/http.js';
import { createTokenManager } from '../../../src/api/token.js';
import { isTransportError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log.js';
import {
  AUTH,
  base,
  CLIENT_ID,
  CLIENT_SECRET,
  createFakeClock,
  detailRecord,
  makeClient,
  mockToken,
  useNock,
  TOKEN,
  TOKEN_2,
  caught,
  socketError,
} from '../../helpers/api.js';

const DETAIL = '/svc/openapi/v1.0/requests/K3J9QX2A/';

function makeTokens(retry = { maxAttempts: 3 }) {
  const clock = createFakeClock();
  const http = createHttp({
    clock,
    log: silentLogger(),
    random: () => 0.5,
    rateLimitPerSec: 0,
    retry,
  });
  const tokens = createTokenManager({
    http,
    authUrl: AUTH,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    clock,
    log: silentLogger(),
  });
  return { clock, tokens };
}

useNock();

describe('token request', () => {
  it('POSTs the form-encoded client credentials to {auth_url}/v2.0/oauth2/token/', async () => {
    let seen: { body: unknown; headers: Record<string, unknown> } | undefined;
    nock(AUTH)
      .post('/v2.0/oauth2/token/')
      .reply(function (_uri, body) {
        seen = { body, headers: { ...this.req.headers } };
        return [200, { access_token: TOKEN, token_type: 'bearer', expires_in: 3600 }];
      });
    const { tokens } = makeTokens();
    await expect(tokens.getToken()).resolves.toBe(TOKEN);
    expect(seen?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(seen?.headers.authorization).toBeUndefined();
    expect(Object.fromEntries(new URLSearchParams(String(seen?.body)))).toEqual({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      grant_type: 'client_credentials',
    });
  });

  it('accepts token_type in any case and expires_in as a digit string', async () => {
    nock(AUTH)
      .post('/v2.0/oauth2/token/')
      .reply(200, { access_token: TOKEN, token_type: 'Bearer', expires_in: '3600' });
    await expect(makeTokens().tokens.getToken()).resolves.toBe(TOKEN);
  });

  it.each([
    [{ access_token: TOKEN, token_type: 'mac', expires_in: 3600 }],
    [{ token_type: 'bearer', expires_in: 3600 }],
    [{ access_token: TOKEN, token_type: 'bearer', expires_in: 0 }],
    [[TOKEN]],
  ])('a malformed token response is api.token_unavailable: %j', async (body) => {
    nock(AUTH).post('/v2.0/oauth2/token/').reply(200, body);
    const error = await caught(makeTokens().tokens.getToken());
    expect(error.code).toBe('api.token_unavailable');
    expect(error.details.causeCode).toBe('api.malformed_response');
    expect(JSON.stringify(error.details)).not.toContain(TOKEN);
  });
});

describe('token errors', () => {
  it.each([
    [401, { error: 'invalid_client', error_description: 'Invalid client credentials' }],
    [400, { error: 'invalid_client' }],
    [401, {}],
  ])('%i %j is api.invalid_client, not retried', async (status, body) => {
    const scope = nock(AUTH).post('/v2.0/oauth2/token/').reply(status, body);
    const error = await caught(makeTokens().tokens.getToken());
    expect(error.code).toBe('api.invalid_client');
    expect(error.isRetryable).toBe(false);
    expect(error.hint).toContain('TRANSPORT_CLIENT_ID');
    expect(JSON.stringify(error)).not.toContain(CLIENT_SECRET);
    expect(scope.isDone()).toBe(true);
  });

  it('backs off on 5xx and 429 with the shared retry policy, then succeeds', async () => {
    nock(AUTH).post('/v2.0/oauth2/token/').reply(503).post('/v2.0/oauth2/token/').reply(429);
    mockToken();
    const { tokens, clock } = makeTokens({ maxAttempts: 5 });
    await expect(tokens.getToken()).resolves.toBe(TOKEN);
    expect(clock.sleeps).toEqual([250, 500]); // full jitter at 0.5 of 500 ms, 1000 ms
  });

  it('gives api.token_unavailable after the retries run out, and on a network failure', async () => {
    nock(AUTH).post('/v2.0/oauth2/token/').times(3).reply(502);
    const error = await caught(makeTokens({ maxAttempts: 3 }).tokens.getToken());
    expect(error.code).toBe('api.token_unavailable');
    expect(error.isRetryable).toBe(true);
    expect(error.details).toMatchObject({ causeCode: 'api.server', status: 502, attempts: 3 });

    nock(AUTH).post('/v2.0/oauth2/token/').times(2).replyWithError(socketError('ECONNRESET'));
    const network = await caught(makeTokens({ maxAttempts: 2 }).tokens.getToken());
    expect(network.code).toBe('api.token_unavailable');
    expect(network.details.causeCode).toBe('api.network');
  });

  it('a 404 from a wrong auth URL is api.token_unavailable and not retried', async () => {
    const scope = nock(AUTH).post('/v2.0/oauth2/token/').reply(404, { detail: 'Not found' });
    const error = await caught(makeTokens().tokens.getToken());
    expect(error.code).toBe('api.token_unavailable');
    expect(error.isRetryable).toBe(false);
    expect(scope.isDone()).toBe(true);
  });
});

describe('token cache', () => {
  it('reuses the token until 80 % of its lifetime, then refreshes', async () => {
    mockToken(TOKEN, 100);
    const { tokens, clock } = makeTokens();
    await expect(tokens.getToken()).resolves.toBe(TOKEN);
    clock.advance(79_999);
    await expect(tokens.getToken()).resolves.toBe(TOKEN); // no second interceptor needed
    mockToken(TOKEN_2, 100);
    clock.advance(1);
    await expect(tokens.getToken()).resolves.toBe(TOKEN_2);
    expect(nock.isDone()).toBe(true);
  });

  it('shares one refresh between concurrent callers', async () => {
    const scope = mockToken(TOKEN, 3600, 1);
    const { tokens } = makeTokens();
    const results = await Promise.all(Array.from({ length: 10 }, () => tokens.getToken()));
    expect(new Set(results)).toEqual(new Set([TOKEN]));
    expect(scope.isDone()).toBe(true);
  });

  it('invalidate drops only the token it names', async () => {
    mockToken(TOKEN);
    const { tokens } = makeTokens();
    await tokens.getToken();
    tokens.invalidate('some-older-token');
    await expect(tokens.getToken()).resolves.toBe(TOKEN); // still cached: no request
    tokens.invalidate(TOKEN);
    mockToken(TOKEN_2);
    await expect(tokens.getToken()).resolves.toBe(TOKEN_2);
  });

  it('keeps using an unexpired token when a refresh fails, and retries the refresh later', async () => {
    mockToken(TOKEN, 100);
    const { tokens, clock } = makeTokens({ maxAttempts: 2 });
    await tokens.getToken();
    clock.advance(85_000);
    nock(AUTH).post('/v2.0/oauth2/token/').times(2).reply(503);
    await expect(tokens.getToken()).resolves.toBe(TOKEN);
    clock.advance(1_000);
    await expect(tokens.getToken()).resolves.toBe(TOKEN); // cool-down: no request
    clock.advance(20_000); // now past expiry: must refresh
    mockToken(TOKEN_2, 100);
    await expect(tokens.getToken()).resolves.toBe(TOKEN_2);
    expect(nock.isDone()).toBe(true);
  });

  it('a caller that aborts stops waiting without failing the shared refresh', async () => {
    nock(AUTH)
      .post('/v2.0/oauth2/token/')
      .delay(50)
      .reply(200, { access_token: TOKEN, token_type: 'bearer', expires_in: 3600 });
    const { tokens } = makeTokens();
    const controller = new AbortController();
    const aborted = tokens.getToken(controller.signal);
    const other = tokens.getToken();
    controller.abort(new Error('shutdown'));
    await expect(aborted).rejects.toThrow('shutdown');
    await expect(other).resolves.toBe(TOKEN);
  });
});

describe('401 handling in API calls', () => {
  it('retries once with a fresh token after a 401', async () => {
    mockToken(TOKEN);
    mockToken(TOKEN_2);
    const auths: unknown[] = [];
    base()
      .get(DETAIL)
      .reply(function () {
        auths.push(this.req.headers.authorization);
        return [
          401,
          {
            message: 'Authentication credentials were not provided.',
            code: 'members:not_authenticated',
          },
        ];
      })
      .get(DETAIL)
      .reply(function () {
        auths.push(this.req.headers.authorization);
        return [200, detailRecord('K3J9QX2A')];
      });
    const { client } = makeClient();
    const result = await client.getRequest('K3J9QX2A');
    expect(result.kind).toBe('ok');
    expect(auths).toEqual([`Bearer ${TOKEN}`, `Bearer ${TOKEN_2}`]);
    expect(nock.isDone()).toBe(true);
  });

  it('a second 401 is api.unauthorized, with no third attempt', async () => {
    mockToken(TOKEN);
    mockToken(TOKEN_2);
    const body = {
      message: 'Authentication credentials were not provided.',
      code: 'members:not_authenticated',
    };
    base().get(DETAIL).times(2).reply(401, body);
    const { client } = makeClient();
    const error = await caught(client.getRequest('K3J9QX2A'));
    expect(error.code).toBe('api.unauthorized');
    expect(error.isRetryable).toBe(false);
    expect(error.details).toMatchObject({
      status: 401,
      serviceCode: 'members:not_authenticated',
      isAfterRefresh: true,
      requestId: 'K3J9QX2A',
    });
    expect(nock.isDone()).toBe(true);
    expect(isTransportError(error, 'api.')).toBe(true);
  });

  it('concurrent 401s with the same token lead to one refresh', async () => {
    mockToken(TOKEN);
    const refresh = mockToken(TOKEN_2, 3600, 1);
    base().get(DETAIL).times(3).reply(401, {});
    base().get(DETAIL).times(3).reply(200, detailRecord('K3J9QX2A'));
    const { client } = makeClient();
    const results = await Promise.all([1, 2, 3].map(() => client.getRequest('K3J9QX2A')));
    expect(results.map((r) => r.kind)).toEqual(['ok', 'ok', 'ok']);
    expect(refresh.isDone()).toBe(true);
    expect(nock.isDone()).toBe(true);
  });

  it('N concurrent first calls make one token request', async () => {
    const scope = mockToken(TOKEN, 3600, 1);
    base().get(DETAIL).times(8).reply(200, detailRecord('K3J9QX2A'));
    const { client } = makeClient({ concurrency: 8 });
    await Promise.all(Array.from({ length: 8 }, () => client.getRequest('K3J9QX2A')));
    expect(scope.isDone()).toBe(true);
    expect(nock.pendingMocks()).toEqual([]);
  });
});
