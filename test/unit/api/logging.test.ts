import nock from 'nock';
import { describe, expect, it } from 'vitest';
import {
  AUTH,
  base,
  CLIENT_SECRET,
  captureLogger,
  detailRecord,
  hub,
  listItem,
  makeClient,
  useNock,
  TOKEN,
  TOKEN_2,
} from '../../helpers/api.js';

useNock();

describe('log output', () => {
  it('never carries the client secret or a token, and no patient data', async () => {
    const { log, lines } = captureLogger();
    nock(AUTH)
      .post('/v2.0/oauth2/token/')
      .reply(503)
      .post('/v2.0/oauth2/token/')
      .reply(200, { access_token: TOKEN, token_type: 'bearer', expires_in: 3600 })
      .post('/v2.0/oauth2/token/')
      .reply(200, { access_token: TOKEN_2, token_type: 'bearer', expires_in: 3600 });
    base()
      .get('/svc/openapi/v1.0/requests/')
      .query(true)
      .reply(200, [listItem('K3J9QX2A'), { id: 'BAD1', patient_first_name: 'Zelda', state: 5 }]);
    base()
      .get('/svc/openapi/v1.0/requests/K3J9QX2A/')
      .reply(401, { code: 'members:not_authenticated' });
    base()
      .get('/svc/openapi/v1.0/requests/K3J9QX2A/')
      .reply(500, { message: 'Patient Ada Lovelace failed' })
      .get('/svc/openapi/v1.0/requests/K3J9QX2A/')
      .reply(200, detailRecord('K3J9QX2A'));
    hub()
      .put('/api/openapi/v2.0/requests/K3J9QX2A/accept/')
      .reply(201, '{"response_notes": "Ada Lov');
    hub().put('/api/openapi/v2.0/requests/K3J9QX2A/decline/').reply(403, { message: 'nope' });

    const { client } = makeClient({ log });
    await client.listRequests({ from: 0, to: 1, state: 'accepted' });
    await client.getRequest('K3J9QX2A');
    await client.accept('K3J9QX2A', { responseNotes: 'for Ada Lovelace' });
    await client.decline('K3J9QX2A').catch(() => undefined);

    const output = lines.join('');
    expect(lines.length).toBeGreaterThan(5);
    for (const secret of [CLIENT_SECRET, TOKEN, TOKEN_2, 'Bearer'])
      expect(output).not.toContain(secret);
    for (const patient of ['Ada', 'Lovelace', 'Zelda', '1950-12-10'])
      expect(output).not.toContain(patient);
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const atInfo = parsed.filter((line) => (line.level as number) >= 30);
    expect(atInfo.map((line) => line.msg)).toContain('api call failed, retrying');
    // Debug lines name endpoint, status and path, without the query string.
    const listCall = parsed.find((line) => line.endpoint === 'requests.list');
    expect(listCall).toMatchObject({
      area: 'api',
      method: 'GET',
      status: 200,
      path: '/svc/openapi/v1.0/requests/',
    });
    expect(parsed.every((line) => !String(line.path ?? '').includes('?'))).toBe(true);
    // Each line carries the area binding once.
    expect(lines.every((line) => (line.match(/"area"/g) ?? []).length <= 1)).toBe(true);
  });
});
