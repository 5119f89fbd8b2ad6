import nock from 'nock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  base,
  detailRecord,
  hub,
  listItem,
  makeClient,
  mockToken,
  useNock,
  TOKEN,
  caught,
} from '../../helpers/api.js';
import { deferred } from '../../helpers/deferred.js';

interface Seen {
  method: string;
  path: string;
  headers: Record<string, unknown>;
  body: unknown;
}

/** Records each matching request and answers it. */
function record(seen: Seen[], status: number, reply: unknown) {
  return function (this: nock.ReplyFnContext, path: string, body: unknown) {
    seen.push({ method: this.req.method, path, headers: { ...this.req.headers }, body });
    return [status, reply] as [number, unknown];
  };
}

const FROM = Date.UTC(2026, 0, 28, 0, 0, 0) + 500; // 1769558400.5 s
const TO = Date.UTC(2026, 0, 29, 0, 0, 0) + 200; //   1769644800.2 s

useNock();
beforeEach(() => mockToken());

const DETAILS = '/svc/openapi/v1.0/request-details/';
/** The interceptor of the full list's page `n`. */
const detailsPage = (n: number) =>
  base()
    .get(DETAILS)
    .query((q) => q.page === String(n));
/** Page `n` of `pages`, holding a record for each of `ids`. */
const pageOf = (n: number, pages: number, ids: string[]) => ({
  page: n,
  pages,
  results: ids.map((id) => detailRecord(id)),
});

describe('read endpoints', () => {
  it('listRequests: GET {base}/openapi/v1.0/requests/ with epoch-second window (floor, ceil)', async () => {
    const seen: Seen[] = [];
    base()
      .get('/svc/openapi/v1.0/requests/')
      .query(true)
      .reply(record(seen, 200, [listItem('K3J9QX2A'), listItem('XX-ABCD1234')]));
    const { client } = makeClient();
    const result = await client.listRequests({ from: new Date(FROM), to: TO, state: 'completed' });
    expect(result.items.map((i) => i.id)).toEqual(['K3J9QX2A', 'XX-ABCD1234']);
    expect(result.rejected).toEqual([]);
    expect(seen[0]?.path).toBe(
      '/svc/openapi/v1.0/requests/?date__gte=1769558400&date__lte=1769644801&request__state=completed',
    );
    expect(seen[0]?.method).toBe('GET');
    expect(seen[0]?.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      accept: 'application/json',
    });
    expect(seen[0]?.headers['content-type']).toBeUndefined();
  });

  it('listRequestDetails: pages 1..pages, re-reading pages from each response', async () => {
    const seen: Seen[] = [];
    const page = (n: number, pages: number, ids: string[]) =>
      record(seen, 200, { page: n, pages, results: ids.map((id) => detailRecord(id)) });
    const path = '/svc/openapi/v1.0/request-details/';
    base()
      .get(path)
      .query({
        date__gte: '1769558400',
        date__lte: '1769644801',
        request__state: 'awaiting',
        page: '1',
      })
      .reply(page(1, 2, ['A1', 'A2']));
    base()
      .get(path)
      .query((q) => q.page === '2')
      .reply(page(2, 3, ['A3'])); // grew while reading
    base()
      .get(path)
      .query((q) => q.page === '3')
      .reply(page(3, 3, ['A4']));
    const { client } = makeClient();
    const pages = [];
    for await (const p of client.listRequestDetails({ from: FROM, to: TO, state: 'awaiting' }))
      pages.push(p);
    expect(pages.map((p) => [p.page, p.pages, p.items.map((i) => i.request_id)])).toEqual([
      [1, 2, ['A1', 'A2']],
      [2, 3, ['A3']],
      [3, 3, ['A4']],
    ]);
    expect(pages[0]?.raws).toHaveLength(2);
    expect(nock.isDone()).toBe(true);
  });

  it('listRequestDetails stops when pages shrinks, and after page 1 when there are none', async () => {
    detailsPage(1).reply(200, pageOf(1, 3, ['A1']));
    detailsPage(2).reply(200, pageOf(2, 2, []));
    const { client } = makeClient();
    const seen: number[] = [];
    for await (const p of client.listRequestDetails({ from: FROM, to: TO, state: 'accepted' }))
      seen.push(p.page);
    expect(seen).toEqual([1, 2]);

    base()
      .get(DETAILS)
      .query(true)
      .reply(200, pageOf(1, 0, []));
    const empty: number[] = [];
    for await (const p of client.listRequestDetails({ from: FROM, to: TO, state: 'accepted' }))
      empty.push(p.page);
    expect(empty).toEqual([1]);
  });

  it('listRequestDetails asks for the next page while the one before is compared with the mirror', async () => {
    const pageTwo = deferred();
    detailsPage(1).reply(200, pageOf(1, 2, ['A1']));
    detailsPage(2).reply(() => {
      pageTwo.resolve();
      return [200, pageOf(2, 2, ['A2'])];
    });
    const { client } = makeClient();
    const compared: string[] = [];
    // Page 1's comparison ends only once page 2 has been asked for: fetching one page at a
    // time, after the comparison of the one before, never gets past page 1.
    const isKnown = async (records: { id: string | null }[]) => {
      if (records.some((r) => r.id === 'A1')) await pageTwo.promise;
      compared.push(...records.map((r) => r.id!));
      return records.map(() => false);
    };
    const ids: string[] = [];
    for await (const p of client.listRequestDetails({
      from: FROM,
      to: TO,
      state: 'awaiting',
      isKnown,
    }))
      ids.push(...p.items.map((i) => i.request_id));
    expect(ids).toEqual(['A1', 'A2']);
    expect(compared).toEqual(['A1', 'A2']);
  });

  it('listRequestDetails asks for the pages after page 1 at once, as many as the concurrency', async () => {
    // Page 2 answers only once page 4 has been asked for too: one page at a time never gets
    // past page 2. Page 5 is asked for once page 2 has answered.
    const pageFour = deferred();
    let isReleasedByValve = false;
    const asked: number[] = [];
    let askedWhenPageTwoAnswered: number[] = [];
    const answer = (n: number, ids: string[]) => () => {
      asked.push(n);
      if (n === 4) pageFour.resolve();
      return [200, pageOf(n, 5, ids)] as [number, unknown];
    };
    detailsPage(1).reply(answer(1, ['A1']));
    detailsPage(2).reply((_uri, _body, callback) => {
      asked.push(2);
      void pageFour.promise.then(() => {
        askedWhenPageTwoAnswered = [...asked].sort();
        callback(null, [200, pageOf(2, 5, ['A2'])]);
      });
    });
    detailsPage(3).reply(answer(3, ['A3']));
    detailsPage(4).reply(answer(4, ['A4']));
    detailsPage(5).reply(answer(5, ['A5']));
    const { client } = makeClient({ concurrency: 3 });
    // Only for the failure.
    const valve = setTimeout(() => {
      isReleasedByValve = true;
      pageFour.resolve();
    }, 5_000);
    const ids: string[] = [];
    try {
      for await (const p of client.listRequestDetails({ from: FROM, to: TO, state: 'awaiting' }))
        ids.push(...p.items.map((i) => i.request_id));
    } finally {
      clearTimeout(valve);
    }
    expect(isReleasedByValve).toBe(false);
    expect(ids).toEqual(['A1', 'A2', 'A3', 'A4', 'A5']);
    expect(askedWhenPageTwoAnswered).toEqual([1, 2, 3, 4]);
    expect(nock.isDone()).toBe(true);
  });

  it('listRequestDetails asks for as many pages ahead as its caller says', async () => {
    const asked: number[] = [];
    let askedWhenPageTwoAnswered: number[] = [];
    for (const n of [1, 2, 3, 4]) {
      detailsPage(n).reply(() => {
        asked.push(n);
        if (n === 2) askedWhenPageTwoAnswered = [...asked].sort();
        return [200, pageOf(n, 4, [`A${n}`])];
      });
    }
    const { client } = makeClient({ concurrency: 4 });
    const ids: string[] = [];
    for await (const p of client.listRequestDetails({
      from: FROM,
      to: TO,
      state: 'awaiting',
      pagesAhead: 1,
    }))
      ids.push(...p.items.map((i) => i.request_id));
    expect(ids).toEqual(['A1', 'A2', 'A3', 'A4']);
    expect(askedWhenPageTwoAnswered).toEqual([1, 2]);
  });

  it('listRequestDetails: a 404 for a page asked ahead ends the pages', async () => {
    detailsPage(1).reply(200, pageOf(1, 2, ['A1']));
    detailsPage(2).reply(404, { message: 'Invalid page.', code: 'common:not_found' });
    const { client } = makeClient();
    const seen: number[] = [];
    for await (const p of client.listRequestDetails({ from: FROM, to: TO, state: 'awaiting' }))
      seen.push(p.page);
    expect(seen).toEqual([1]);
  });

  it('listRequestDetails: a caller that stops early cancels the page asked ahead', async () => {
    detailsPage(1).reply(200, pageOf(1, 2, ['A1']));
    // Page 2 answers 500 only once the caller has stopped; a live request would retry it.
    let answer: (() => void) | undefined;
    const asked = deferred();
    detailsPage(2).reply(function (_uri, _body, callback) {
      answer = () => callback(null, [500, { message: 'down' }]);
      asked.resolve();
    });
    const retry = detailsPage(2).reply(200, pageOf(2, 2, []));
    const retries: unknown[] = [];
    const { client } = makeClient({ onRetry: (event) => retries.push(event) });
    for await (const p of client.listRequestDetails({ from: FROM, to: TO, state: 'awaiting' })) {
      expect(p.page).toBe(1);
      await asked.promise;
      break;
    }
    answer!();
    // A cancelled request ends without a trace; a live one retries at once (the fake clock's
    // sleeps return at once), some 600 turns of the event loop after its 500 is answered.
    for (let turn = 0; turn < 5_000 && retries.length === 0; turn += 1)
      await new Promise((resolve) => setImmediate(resolve));
    expect(retries).toEqual([]);
    expect(retry.isDone()).toBe(false);
    nock.cleanAll();
  });

  it('getRequestDetailsPage: a wrong top-level shape is api.malformed_response', async () => {
    base()
      .get('/svc/openapi/v1.0/request-details/')
      .query(true)
      .reply(200, [detailRecord('A1')]);
    const { client } = makeClient();
    const error = await caught(
      client.getRequestDetailsPage({ from: FROM, to: TO, state: 'accepted', page: 1 }),
    );
    expect(error.code).toBe('api.malformed_response');
  });

  it('getRequest: GET {base}/openapi/v1.0/requests/{id}/ with exclude_facilities', async () => {
    const seen: Seen[] = [];
    base()
      .get('/svc/openapi/v1.0/requests/XX-ABCD1234/')
      .reply(record(seen, 200, detailRecord('XX-ABCD1234')));
    base()
      .get('/svc/openapi/v1.0/requests/XX-ABCD1234/')
      .query({ exclude_facilities: 'true' })
      .reply(
        record(
          seen,
          200,
          detailRecord('XX-ABCD1234', {
            account: { id: 'a', name: 'b', service_levels: [], facilities: null },
          }),
        ),
      );
    const { client } = makeClient();
    const plain = await client.getRequest('XX-ABCD1234');
    const excluded = await client.getRequest('XX-ABCD1234', { excludeFacilities: true });
    expect(plain.kind === 'ok' && plain.record.request_id).toBe('XX-ABCD1234');
    expect(excluded.kind === 'ok' && excluded.record.account?.facilities).toBeNull();
    expect(seen.map((s) => s.path)).toEqual([
      '/svc/openapi/v1.0/requests/XX-ABCD1234/',
      '/svc/openapi/v1.0/requests/XX-ABCD1234/?exclude_facilities=true',
    ]);
  });

  it('getRequest returns the raw record next to the parsed one', async () => {
    const raw = detailRecord('K3J9QX2A', { brand_new_member: { x: 1 } });
    base().get('/svc/openapi/v1.0/requests/K3J9QX2A/').reply(200, raw);
    const { client } = makeClient();
    const result = await client.getRequest('K3J9QX2A');
    expect(result.kind).toBe('ok');
    if (result.kind === 'ok') {
      expect(result.raw).toEqual(raw);
      expect(result.record.brand_new_member).toEqual({ x: 1 });
      expect(result.record.transport_pickup_time).toBe('2026-01-28T14:00:00.000Z');
    }
  });

  it('getAccount: GET {base}/openapi/v1.0/accounts/{id}/', async () => {
    base()
      .get('/svc/openapi/v1.0/accounts/acc%201/')
      .reply(200, {
        company_name: 'General',
        service_levels: ['ALS'],
        facilities: [{ name: 'Main', address: '1 Main St' }],
      });
    const { client } = makeClient();
    await expect(client.getAccount('acc 1')).resolves.toMatchObject({
      company_name: 'General',
      facilities: [{ name: 'Main', address: '1 Main St' }],
    });
  });

  it('rejects bad window arguments without a call', async () => {
    const { client } = makeClient();
    await expect(
      client.listRequests({ from: TO, to: FROM, state: 'accepted' }),
    ).rejects.toMatchObject({
      code: 'api.invalid_argument',
    });
    await expect(
      client.listRequests({ from: FROM, to: TO, state: 'awaiting' as 'accepted' }),
    ).rejects.toMatchObject({ code: 'api.invalid_argument' });
    await expect(
      client.getRequestDetailsPage({ from: FROM, to: TO, state: 'accepted', page: 0 }),
    ).rejects.toMatchObject({
      code: 'api.invalid_argument',
    });
  });
});

describe('action endpoints', () => {
  it('accept: PUT {hub}/openapi/v2.0/requests/{id}/accept/ with response_notes', async () => {
    const seen: Seen[] = [];
    hub()
      .put('/api/openapi/v2.0/requests/XX-ABCD1234/accept/')
      .reply(record(seen, 201, { response_notes: 'ETA 20 min' }));
    const { client } = makeClient();
    await expect(client.accept('XX-ABCD1234', { responseNotes: 'ETA 20 min' })).resolves.toEqual({
      responseNotes: 'ETA 20 min',
    });
    expect(seen[0]).toMatchObject({ method: 'PUT', body: { response_notes: 'ETA 20 min' } });
    expect(seen[0]?.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
    });
  });

  it('accept without notes sends {} and reports null notes', async () => {
    const seen: Seen[] = [];
    hub()
      .put('/api/openapi/v2.0/requests/K3J9QX2A/accept/')
      .reply(record(seen, 201, { response_notes: null }));
    const { client } = makeClient();
    await expect(client.accept('K3J9QX2A')).resolves.toEqual({ responseNotes: null });
    expect(seen[0]?.body).toEqual({});
  });

  it('decline: PUT {hub}/openapi/v2.0/requests/{id}/decline/', async () => {
    const seen: Seen[] = [];
    hub()
      .put('/api/openapi/v2.0/requests/K3J9QX2A/decline/')
      .reply(record(seen, 201, {}));
    const { client } = makeClient();
    await client.decline('K3J9QX2A', { responseNotes: 'no unit free' });
    expect(seen[0]).toMatchObject({ method: 'PUT', body: { response_notes: 'no unit free' } });
  });

  it('sendState: POST {hub}/openapi/v2.0/requests/{id}/state/ with a UTC timestamp', async () => {
    const seen: Seen[] = [];
    hub()
      .post('/api/openapi/v2.0/requests/K3J9QX2A/state/')
      .times(3)
      .reply(record(seen, 201, {}));
    const { client } = makeClient();
    await client.sendState('K3J9QX2A', {
      name: 'en_route',
      timestamp: new Date(Date.UTC(2026, 0, 28, 13)),
    });
    await client.sendState('K3J9QX2A', { name: 'arrived', timestamp: '2026-01-28T15:05:00+02:00' });
    await client.sendState('K3J9QX2A', {
      name: 'on_board',
      timestamp: Date.UTC(2026, 0, 28, 13, 10),
    });
    expect(seen.map((s) => s.body)).toEqual([
      { name: 'en_route', timestamp: '2026-01-28T13:00:00.000Z' },
      { name: 'arrived', timestamp: '2026-01-28T13:05:00.000Z' },
      { name: 'on_board', timestamp: '2026-01-28T13:10:00.000Z' },
    ]);
  });

  it('changeRequest: POST {hub}/.../change-request/; bestTime: PUT {hub}/.../best-time/', async () => {
    const seen: Seen[] = [];
    hub()
      .post('/api/openapi/v2.0/requests/K3J9QX2A/change-request/')
      .reply(record(seen, 200, {}));
    hub()
      .put('/api/openapi/v2.0/requests/K3J9QX2A/best-time/')
      .reply(record(seen, 201, {}));
    const { client } = makeClient();
    await client.changeRequest('K3J9QX2A', {
      agreedDt: '2026-01-28T16:00:00Z',
      changeReason: 'traffic',
    });
    await client.bestTime('K3J9QX2A', { proposedAgreedDt: new Date(Date.UTC(2026, 0, 28, 17)) });
    expect(seen.map((s) => [s.method, s.body])).toEqual([
      ['POST', { agreed_dt: '2026-01-28T16:00:00.000Z', change_reason: 'traffic' }],
      ['PUT', { proposed_agreed_dt: '2026-01-28T17:00:00.000Z' }],
    ]);
  });

  it('sendLocations: POST {hub}/openapi/v2.0/requests/{id}/locations/ by default', async () => {
    const seen: Seen[] = [];
    hub()
      .post('/api/openapi/v2.0/requests/K3J9QX2A/locations/')
      .reply(record(seen, 200, {}));
    const { client } = makeClient();
    const sample = { lat: 40.1, lng: -74.2, alt: 12, speed: 13.5, timestamp: 1769605200.25 };
    await expect(client.sendLocations('K3J9QX2A', [sample])).resolves.toEqual({ batches: 1 });
    expect(seen[0]?.body).toEqual([sample]);
  });

  it('sendLocations with locationsApi v1: POST {base}/openapi/v1.0/requests/{id}/locations/', async () => {
    const seen: Seen[] = [];
    base()
      .post('/svc/openapi/v1.0/requests/K3J9QX2A/locations/')
      .reply(record(seen, 200, {}));
    const { client } = makeClient({ locationsApi: 'v1' });
    const sample = { lat: 40.1, lng: -74.2, alt: 12, timestamp: 1769605200 };
    await expect(client.sendLocations('K3J9QX2A', [sample])).resolves.toEqual({ batches: 1 });
    expect(seen[0]?.body).toEqual([sample]);
  });
});

describe('base addresses with and without a trailing slash or a path prefix', () => {
  it.each([
    ['https://b.example', '/openapi/v1.0/requests/'],
    ['https://b.example/', '/openapi/v1.0/requests/'],
    ['https://b.example/p/q', '/p/q/openapi/v1.0/requests/'],
    ['https://b.example/p/q/', '/p/q/openapi/v1.0/requests/'],
  ])('%s', async (baseUrl, expected) => {
    const paths: string[] = [];
    nock('https://b.example')
      .get((uri) => {
        paths.push(uri);
        return true;
      })
      .reply(200, []);
    const { client } = makeClient({ baseUrl });
    await client.listRequests({ from: FROM, to: TO, state: 'accepted' });
    expect(paths[0]?.split('?')[0]).toBe(expected);
  });

  it('hub with a prefix and no slash, auth with a prefix and a slash', async () => {
    const paths: string[] = [];
    const capture = (uri: string) => {
      paths.push(uri);
      return true;
    };
    nock('https://a.example')
      .post(capture)
      .reply(200, { access_token: TOKEN, token_type: 'bearer', expires_in: 60 });
    nock('https://h.example').put(capture).reply(201, {});
    const { client } = makeClient({
      authUrl: 'https://a.example/auth/',
      hubUrl: 'https://h.example/hub',
    });
    await client.decline('K3J9QX2A');
    // nock may call a path matcher more than once per request
    expect([...new Set(paths)]).toEqual([
      '/auth/v2.0/oauth2/token/',
      '/hub/openapi/v2.0/requests/K3J9QX2A/decline/',
    ]);
    for (const path of paths) expect(path).not.toContain('//');
  });
});

describe('documented error shapes', () => {
  it('403 members:permission_denied on detail is api.not_available', async () => {
    base().get('/svc/openapi/v1.0/requests/K3J9QX2A/').reply(403, {
      message: 'You do not have permission to perform this action.',
      code: 'members:permission_denied',
    });
    const { client } = makeClient();
    const error = await caught(client.getRequest('K3J9QX2A'));
    expect(error.code).toBe('api.not_available');
    expect(error.isRetryable).toBe(false);
    expect(error.details).toMatchObject({
      status: 403,
      endpoint: 'requests.detail',
      method: 'GET',
      requestId: 'K3J9QX2A',
      serviceCode: 'members:permission_denied',
    });
  });

  it('403 and 404 on accept (bodies not relied on)', async () => {
    hub().put('/api/openapi/v2.0/requests/K3J9QX2A/accept/').reply(403, 'Forbidden');
    hub()
      .put('/api/openapi/v2.0/requests/NOPE0000/accept/')
      .reply(404, { message: 'Not found.', code: 'not_found' });
    const { client } = makeClient();
    expect((await caught(client.accept('K3J9QX2A'))).code).toBe('api.not_available');
    const notFound = await caught(client.accept('NOPE0000'));
    expect(notFound.code).toBe('api.not_found');
    expect(notFound.details).toMatchObject({
      status: 404,
      requestId: 'NOPE0000',
      serviceMessage: 'Not found.',
    });
  });

  it('400 with a field map is api.invalid with the fields and a readable message', async () => {
    hub()
      .post('/api/openapi/v2.0/requests/K3J9QX2A/state/')
      .reply(400, {
        name: [{ message: '"warp" is not a valid choice.', code: 'common:choice_invalid' }],
      });
    const { client } = makeClient();
    const error = await caught(
      client.sendState('K3J9QX2A', { name: 'en_route', timestamp: '2026-01-28T12:00:00Z' }),
    );
    expect(error.code).toBe('api.invalid');
    expect(error.message).toContain('name: "warp" is not a valid choice.');
    expect(error.details.fields).toEqual({
      name: [{ message: '"warp" is not a valid choice.', code: 'common:choice_invalid' }],
    });
  });

  it('400 with a field map keeps a member named __proto__, as JSON.parse reads it', async () => {
    hub()
      .post('/api/openapi/v2.0/requests/K3J9QX2A/state/')
      .reply(400, '{"__proto__": [{"message": "Unknown field.", "code": "common:unknown"}]}', {
        'content-type': 'application/json',
      });
    const { client } = makeClient();
    const error = await caught(
      client.sendState('K3J9QX2A', { name: 'en_route', timestamp: '2026-01-28T12:00:00Z' }),
    );
    expect(error.code).toBe('api.invalid');
    expect(error.message).toContain('__proto__: Unknown field.');
  });

  it('400 with an array of field maps (locations) names the sample', async () => {
    const fields = [{}, { lat: [{ message: 'This field is required.', code: 'common:required' }] }];
    hub().post('/api/openapi/v2.0/requests/K3J9QX2A/locations/').reply(400, fields);
    const { client } = makeClient();
    const samples = [1, 2].map((i) => ({ lat: 1, lng: 2, alt: 3, timestamp: 1769605200 + i }));
    const error = await caught(client.sendLocations('K3J9QX2A', samples));
    expect(error.code).toBe('api.invalid');
    expect(error.message).toContain('sample 1: lat: This field is required.');
    expect(error.details.fields).toEqual([
      {},
      { lat: [{ message: 'This field is required.', code: 'common:required' }] },
    ]);
  });

  it('400 on accept without a field map still reads', async () => {
    hub()
      .put('/api/openapi/v2.0/requests/K3J9QX2A/accept/')
      .reply(400, { message: 'Bad notes', code: 'x' });
    const { client } = makeClient();
    const error = await caught(client.accept('K3J9QX2A', { responseNotes: 'ok' }));
    expect(error.code).toBe('api.invalid');
    expect(error.message).toContain('Bad notes');
  });

  it.each([404, 410])(
    '%i from a list endpoint is api.endpoint_gone, not retried',
    async (status) => {
      base().get('/svc/openapi/v1.0/requests/').query(true).reply(status, { message: 'gone' });
      base().get('/svc/openapi/v1.0/request-details/').query(true).reply(status);
      const { client, clock } = makeClient();
      const list = await caught(client.listRequests({ from: FROM, to: TO, state: 'accepted' }));
      expect(list.code).toBe('api.endpoint_gone');
      expect(list.isRetryable).toBe(false);
      expect(list.hint).toMatch(/v1\.0/);
      const details = await caught(
        client.getRequestDetailsPage({ from: FROM, to: TO, state: 'accepted', page: 1 }),
      );
      expect(details.code).toBe('api.endpoint_gone');
      expect(clock.sleeps).toEqual([]);
    },
  );

  it('404 and 410 for one id are api.not_found and api.gone', async () => {
    base()
      .get('/svc/openapi/v1.0/requests/A/')
      .reply(404)
      .get('/svc/openapi/v1.0/requests/B/')
      .reply(410);
    const { client } = makeClient();
    expect((await caught(client.getRequest('A'))).code).toBe('api.not_found');
    expect((await caught(client.getRequest('B'))).code).toBe('api.gone');
  });
});

describe('client options', () => {
  it.each([
    [{ baseUrl: 'base.example/svc' }],
    [{ hubUrl: 'ftp://hub.example/' }],
    [{ authUrl: '' }],
    [{ clientSecret: '' }],
  ])('refuses %j at creation', (override) => {
    expect(() => makeClient(override)).toThrow(
      expect.objectContaining({ code: 'api.invalid_argument' }) as Error,
    );
  });
});
