import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, getToken, startSimulator, T0, type Started } from '../../helpers/simulator.js';

const TOKEN_PATH = '/v2.0/oauth2/token/';
const NOT_AUTHENTICATED = {
  message: 'Authentication credentials were not provided.',
  code: 'members:not_authenticated',
};

function form(fields: Record<string, string>) {
  return {
    method: 'POST',
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  };
}

const GOOD = {
  client_id: 'demo-client',
  client_secret: 'demo-secret',
  grant_type: 'client_credentials',
};

describe('simulator token endpoint and authentication', () => {
  let s: Started;
  beforeAll(async () => {
    s = await startSimulator({ seed: 3, requests: 40, tokenTtlSec: 120 });
  });
  afterAll(() => s.sim.close());

  it('issues a JWT-shaped bearer token with the configured lifetime', async () => {
    const reply = await call(s.url, TOKEN_PATH, form(GOOD));
    expect(reply.status).toBe(200);
    const body = reply.body as { access_token: string; token_type: string; expires_in: number };
    expect(body.token_type).toBe('bearer');
    expect(body.expires_in).toBe(120);
    const parts = body.access_token.split('.');
    expect(parts).toHaveLength(3);
    const payload = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString()) as {
      exp: number;
    };
    expect(payload.exp).toBe(T0 / 1000 + 120);
    expect(s.sim.issuedTokens()).toContain(body.access_token);
  });

  it('accepts client credentials as HTTP Basic too', async () => {
    const basic = Buffer.from('demo-client:demo-secret').toString('base64');
    const reply = await call(s.url, TOKEN_PATH, {
      ...form({ grant_type: 'client_credentials' }),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${basic}`,
      },
    });
    expect(reply.status).toBe(200);
  });

  it('answers 401 invalid_client for a wrong secret or an unknown client', async () => {
    for (const fields of [
      { ...GOOD, client_secret: 'nope' },
      { ...GOOD, client_id: 'someone-else' },
      { grant_type: 'client_credentials' },
    ]) {
      const reply = await call(s.url, TOKEN_PATH, form(fields));
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ error: 'invalid_client' });
      expect(typeof (reply.body as { error_description: unknown }).error_description).toBe(
        'string',
      );
    }
  });

  it('answers 400 for a wrong or missing grant type', async () => {
    const wrong = await call(s.url, TOKEN_PATH, form({ ...GOOD, grant_type: 'password' }));
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ error: 'unsupported_grant_type' });
    const missing = await call(
      s.url,
      TOKEN_PATH,
      form({ client_id: 'demo-client', client_secret: 'demo-secret' }),
    );
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: 'invalid_request' });
  });

  it('requires the trailing slash and POST on the token path', async () => {
    expect((await call(s.url, '/v2.0/oauth2/token', form(GOOD))).status).toBe(404);
    const get = await call(s.url, TOKEN_PATH);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('answers 401 members:not_authenticated without a token or with an unknown one', async () => {
    const missing = await call(s.url, '/openapi/v1.0/requests/');
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual(NOT_AUTHENTICATED);
    const unknown = await call(s.url, '/openapi/v1.0/requests/', { token: 'a.b.c' });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(NOT_AUTHENTICATED);
    const scheme = await call(s.url, '/openapi/v1.0/requests/', {
      headers: { authorization: `Token ${s.token}` },
    });
    expect(scheme.status).toBe(401);
  });

  it('expires tokens on the injected clock', async () => {
    const token = await getToken(s.url);
    expect((await call(s.url, '/openapi/v1.0/requests/', { token })).status).toBe(200);
    s.clock.advance(119_000);
    expect((await call(s.url, '/openapi/v1.0/requests/', { token })).status).toBe(200);
    s.clock.advance(1_000);
    const expired = await call(s.url, '/openapi/v1.0/requests/', { token });
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual(NOT_AUTHENTICATED);
    const fresh = await getToken(s.url);
    expect(fresh).not.toBe(token);
    expect((await call(s.url, '/openapi/v1.0/requests/', { token: fresh })).status).toBe(200);
  });

  it('answers 404 with {message, code} for paths without the trailing slash and unknown paths', async () => {
    const token = await getToken(s.url);
    for (const path of ['/openapi/v1.0/requests', '/openapi/v1.0/request-details', '/nope/', '/']) {
      const reply = await call(s.url, path, { token });
      expect(reply.status, path).toBe(404);
      expect(reply.body).toEqual({ message: 'Not found.', code: 'common:not_found' });
    }
  });

  it('answers 405 for a wrong method, once authenticated', async () => {
    const token = await getToken(s.url);
    const reply = await call(s.url, '/openapi/v1.0/requests/', { method: 'POST', token, body: {} });
    expect(reply.status).toBe(405);
    expect(reply.headers.get('allow')).toBe('GET');
    const accept = await call(s.url, '/openapi/v2.0/requests/ABCDEFGH/accept/', {
      method: 'POST',
      token,
      body: {},
    });
    expect(accept.status).toBe(405);
  });

  it('records every call with its endpoint, path, query and status', async () => {
    s.sim.resetCalls();
    const token = await getToken(s.url);
    await call(s.url, '/openapi/v1.0/requests/?request__state=completed&date__gte=1', { token });
    await call(s.url, '/openapi/v1.0/requests/ZZZZZZZZ/', { token });
    await call(s.url, '/openapi/v1.0/requests');
    expect(s.sim.calls.map((c) => [c.method, c.endpoint, c.status])).toEqual([
      ['POST', 'token', 200],
      ['GET', 'list', 200],
      ['GET', 'detail', 403],
      ['GET', 'unknown', 404],
    ]);
    expect(s.sim.calls[1]).toMatchObject({
      path: '/openapi/v1.0/requests/',
      query: { request__state: 'completed', date__gte: '1' },
    });
    expect(s.sim.calls[2]?.requestId).toBe('ZZZZZZZZ');
    expect(s.sim.calls[0]?.at).toBe(new Date(s.clock.now()).toISOString());
  });
});
