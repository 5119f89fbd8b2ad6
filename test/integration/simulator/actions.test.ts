import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MutationSummary, TruthRecord } from '../../../src/simulator/index.js';
import { startSimulator, T0, type Started } from '../../helpers/simulator.js';

const HOUR = 3_600_000;

describe('simulator provider actions', () => {
  let s: Started;
  beforeAll(async () => {
    // The clock stands still here: only strict last_updated moves on every action.
    s = await startSimulator({ seed: 11, requests: 60, roughness: { lastUpdated: 'strict' } });
  });
  afterAll(() => s.sim.close());

  const truthOf = (id: string) => s.sim.truth().find((t) => t.requestId === id) as TruthRecord;
  const fresh = (state: 'awaiting' | 'accepted') =>
    s.sim.addRequests(1, { state, eventAt: T0 + 5 * HOUR })[0] as string;
  const v2 = (id: string, action: string) => `/openapi/v2.0/requests/${id}/${action}/`;
  const nowIso = () => new Date(s.clock.now()).toISOString();

  describe('accept', () => {
    it('answers 201 echoing the notes, assigns the API user and moves last_updated', async () => {
      const id = fresh('awaiting');
      const before = truthOf(id);
      const events: MutationSummary[] = [];
      s.sim.events.on('mutation', (m: MutationSummary) => events.push(m));
      const reply = await s.api(v2(id, 'accept'), {
        method: 'PUT',
        body: { response_notes: 'ETA 20 min – crew "A"' },
      });
      s.sim.events.removeAllListeners('mutation');
      expect(reply.status).toBe(201);
      expect(reply.body).toEqual({ response_notes: 'ETA 20 min – crew "A"' });
      const after = truthOf(id);
      expect(after.listState).toBe('accepted');
      expect(after.detail.user).toEqual({
        first_name: 'Open',
        last_name: 'API',
        email: 'openapi@demo-provider.example',
      });
      expect(after.lastUpdatedTimestampUtc > before.lastUpdatedTimestampUtc).toBe(true);
      expect(events).toMatchObject([
        { kind: 'accepted', requestId: id, origin: 'api', state: 'accepted' },
      ]);
      expect(s.sim.actions.at(-1)).toMatchObject({
        kind: 'accept',
        requestId: id,
        body: { response_notes: 'ETA 20 min – crew "A"' },
      });
    });

    it('accepts an empty body and echoes null notes', async () => {
      const reply = await s.api(v2(fresh('awaiting'), 'accept'), { method: 'PUT' });
      expect(reply.status).toBe(201);
      expect(reply.body).toEqual({ response_notes: null });
    });

    it('answers 403 when the request is not available and 404 for an unknown id', async () => {
      const id = fresh('awaiting');
      expect((await s.api(v2(id, 'accept'), { method: 'PUT', body: {} })).status).toBe(201);
      const again = await s.api(v2(id, 'accept'), { method: 'PUT', body: {} });
      expect(again.status).toBe(403);
      expect(again.body).toMatchObject({ code: 'members:permission_denied' });
      const gone = fresh('awaiting');
      s.sim.world.makeUnavailable(gone, 'expired');
      expect((await s.api(v2(gone, 'accept'), { method: 'PUT', body: {} })).status).toBe(403);
      expect((await s.api(v2('NOPE0000', 'accept'), { method: 'PUT', body: {} })).status).toBe(404);
    });

    it('validates notes length (450 characters) and the body', async () => {
      const id = fresh('awaiting');
      const long = await s.api(v2(id, 'accept'), {
        method: 'PUT',
        body: { response_notes: 'x'.repeat(451) },
      });
      expect(long.status).toBe(400);
      expect(long.body).toEqual({
        response_notes: [
          {
            message: 'Ensure this field has no more than 450 characters.',
            code: 'common:max_length',
          },
        ],
      });
      expect(
        (await s.api(v2(id, 'accept'), { method: 'PUT', body: { response_notes: 42 } })).status,
      ).toBe(400);
      expect(
        (await s.api(v2(id, 'accept'), { method: 'PUT', body: '{"response_notes": ' })).status,
      ).toBe(400);
      expect((await s.api(v2(id, 'accept'), { method: 'PUT', body: [1] })).status).toBe(400);
      expect(truthOf(id).listState).toBe('awaiting');
      const max = await s.api(v2(id, 'accept'), {
        method: 'PUT',
        body: { response_notes: 'é'.repeat(450) },
      });
      expect(max.status).toBe(201);
    });
  });

  describe('decline', () => {
    it('answers 201 {} and the request becomes unavailable', async () => {
      const id = fresh('awaiting');
      const reply = await s.api(v2(id, 'decline'), {
        method: 'PUT',
        body: { response_notes: 'No crew' },
      });
      expect(reply.status).toBe(201);
      expect(reply.body).toEqual({});
      expect(truthOf(id).isVisible).toBe(false);
      expect((await s.api(`/openapi/v1.0/requests/${id}/`)).status).toBe(403);
      expect((await s.api(v2(id, 'decline'), { method: 'PUT', body: {} })).status).toBe(403);
      expect((await s.api(v2('NOPE0000', 'decline'), { method: 'PUT', body: {} })).status).toBe(
        404,
      );
      const long = await s.api(v2(fresh('awaiting'), 'decline'), {
        method: 'PUT',
        body: { response_notes: 'y'.repeat(451) },
      });
      expect(long.status).toBe(400);
      expect(s.sim.actions.at(-1)).toMatchObject({ kind: 'decline', requestId: id });
    });
  });

  describe('state update', () => {
    it('answers 201 echoing name and timestamp and moves last_updated', async () => {
      const id = fresh('accepted');
      const before = truthOf(id).lastUpdatedTimestampUtc;
      const body = { name: 'en_route', timestamp: nowIso() };
      const reply = await s.api(v2(id, 'state'), { method: 'POST', body });
      expect(reply.status).toBe(201);
      expect(reply.body).toEqual(body);
      expect(truthOf(id).lastUpdatedTimestampUtc > before).toBe(true);
      expect(truthOf(id).listState).toBe('accepted');
    });

    it('completed and canceled close the request', async () => {
      const done = fresh('accepted');
      await s.api(v2(done, 'state'), {
        method: 'POST',
        body: { name: 'completed', timestamp: nowIso() },
      });
      expect(truthOf(done).listState).toBe('completed');
      const off = fresh('accepted');
      await s.api(v2(off, 'state'), {
        method: 'POST',
        body: { name: 'canceled', timestamp: nowIso() },
      });
      expect(truthOf(off).listState).toBe('canceled');
      // A retry after a lost answer is still accepted and does not reopen the request.
      const retry = await s.api(v2(done, 'state'), {
        method: 'POST',
        body: { name: 'completed', timestamp: nowIso() },
      });
      expect(retry.status).toBe(201);
      expect(truthOf(done).listState).toBe('completed');
    });

    it('rejects unknown names and timestamps in the future, older than 7 days or unparseable', async () => {
      const id = fresh('accepted');
      const cases: [Record<string, unknown>, string][] = [
        [{ name: 'teleported', timestamp: nowIso() }, 'name'],
        [
          { name: 'arrived', timestamp: new Date(s.clock.now() + 120_000).toISOString() },
          'timestamp',
        ],
        [
          { name: 'arrived', timestamp: new Date(s.clock.now() - 8 * 24 * HOUR).toISOString() },
          'timestamp',
        ],
        [{ name: 'arrived', timestamp: 'soon' }, 'timestamp'],
        [{ name: 'arrived' }, 'timestamp'],
      ];
      for (const [body, field] of cases) {
        const reply = await s.api(v2(id, 'state'), { method: 'POST', body });
        expect(reply.status, JSON.stringify(body)).toBe(400);
        expect(Object.keys(reply.body as object)).toEqual([field]);
      }
      const bad = await s.api(v2(id, 'state'), {
        method: 'POST',
        body: { name: 'teleported', timestamp: nowIso() },
      });
      expect(bad.body).toEqual({
        name: [{ message: '"teleported" is not a valid choice.', code: 'common:choice_invalid' }],
      });
      const both = await s.api(v2(id, 'state'), { method: 'POST', body: {} });
      expect(Object.keys(both.body as object).sort()).toEqual(['name', 'timestamp']);
      const skew = new Date(s.clock.now() + 30_000).toISOString();
      expect(
        (
          await s.api(v2(id, 'state'), {
            method: 'POST',
            body: { name: 'arrived', timestamp: skew },
          })
        ).status,
      ).toBe(201);
    });

    it('answers 404 for an unknown id and 403 for a request not accepted', async () => {
      const body = { name: 'en_route', timestamp: nowIso() };
      expect((await s.api(v2('NOPE0000', 'state'), { method: 'POST', body })).status).toBe(404);
      expect((await s.api(v2(fresh('awaiting'), 'state'), { method: 'POST', body })).status).toBe(
        403,
      );
    });
  });

  describe('locations', () => {
    const path = (id: string) => `/openapi/v1.0/requests/${id}/locations/`;
    const sample = { lat: 39.96, lng: -83.0, alt: 220, speed: 12.5, timestamp: T0 / 1000 + 0.25 };

    it('answers 200 {} for up to 200 samples', async () => {
      const id = fresh('accepted');
      const one = await s.api(path(id), {
        method: 'POST',
        body: [sample, { ...sample, speed: undefined }],
      });
      expect(one.status).toBe(200);
      expect(one.body).toEqual({});
      expect(
        (await s.api(path(id), { method: 'POST', body: Array(200).fill(sample) })).status,
      ).toBe(200);
      expect(s.sim.actions.at(-1)).toMatchObject({ kind: 'locations', requestId: id });
    });

    it('answers 400 with one field map per sample', async () => {
      const id = fresh('accepted');
      const { alt: _alt, ...noAlt } = sample;
      const reply = await s.api(path(id), {
        method: 'POST',
        body: [sample, noAlt, { ...sample, lat: '39.9' }],
      });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual([
        {},
        { alt: [{ message: 'This field is required.', code: 'common:required' }] },
        { lat: [{ message: 'A valid number is required.', code: 'common:invalid' }] },
      ]);
      expect(
        (await s.api(path(id), { method: 'POST', body: Array(201).fill(sample) })).status,
      ).toBe(400);
      expect((await s.api(path(id), { method: 'POST', body: sample })).status).toBe(400);
      expect((await s.api(path(id), { method: 'POST', body: 'not json' })).status).toBe(400);
    });

    it('answers 404 for an unknown id and 403 for an unavailable request', async () => {
      expect((await s.api(path('NOPE0000'), { method: 'POST', body: [sample] })).status).toBe(404);
      const id = fresh('accepted');
      s.sim.world.makeUnavailable(id, 'reassigned');
      expect((await s.api(path(id), { method: 'POST', body: [sample] })).status).toBe(403);
    });
  });

  describe('change request and best time', () => {
    it('change request answers 200 {} and validates its body', async () => {
      const id = fresh('accepted');
      const agreed = new Date(T0 + 6 * HOUR).toISOString();
      const ok = await s.api(v2(id, 'change-request'), {
        method: 'POST',
        body: { agreed_dt: agreed, change_reason: 'Crew delayed' },
      });
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({});
      expect(s.sim.actions.at(-1)).toMatchObject({ kind: 'change_request', requestId: id });
      const long = await s.api(v2(id, 'change-request'), {
        method: 'POST',
        body: { agreed_dt: agreed, change_reason: 'z'.repeat(451) },
      });
      expect(long.status).toBe(400);
      expect(Object.keys(long.body as object)).toEqual(['change_reason']);
      const missing = await s.api(v2(id, 'change-request'), {
        method: 'POST',
        body: { change_reason: 'x' },
      });
      expect(missing.body).toEqual({
        agreed_dt: [{ message: 'This field is required.', code: 'common:required' }],
      });
      expect(
        (
          await s.api(v2('NOPE0000', 'change-request'), {
            method: 'POST',
            body: { agreed_dt: agreed },
          })
        ).status,
      ).toBe(404);
      expect(
        (
          await s.api(v2(fresh('awaiting'), 'change-request'), {
            method: 'POST',
            body: { agreed_dt: agreed },
          })
        ).status,
      ).toBe(403);
    });

    it('best time answers 201 {} for an awaiting request and validates its body', async () => {
      const id = fresh('awaiting');
      const proposed = new Date(T0 + 7 * HOUR).toISOString();
      const ok = await s.api(v2(id, 'best-time'), {
        method: 'PUT',
        body: { proposed_agreed_dt: proposed },
      });
      expect(ok.status).toBe(201);
      expect(ok.body).toEqual({});
      expect((await s.api(v2(id, 'best-time'), { method: 'PUT', body: {} })).status).toBe(400);
      expect(
        (
          await s.api(v2(id, 'best-time'), {
            method: 'PUT',
            body: { proposed_agreed_dt: 'tomorrow' },
          })
        ).status,
      ).toBe(400);
      expect(
        (
          await s.api(v2(fresh('accepted'), 'best-time'), {
            method: 'PUT',
            body: { proposed_agreed_dt: proposed },
          })
        ).status,
      ).toBe(403);
      expect(
        (
          await s.api(v2('NOPE0000', 'best-time'), {
            method: 'PUT',
            body: { proposed_agreed_dt: proposed },
          })
        ).status,
      ).toBe(404);
    });

    it('the requester answers a pending proposal through the mutation driver', async () => {
      const id = fresh('awaiting');
      const proposed = new Date(T0 + 9 * HOUR).toISOString();
      await s.api(v2(id, 'best-time'), { method: 'PUT', body: { proposed_agreed_dt: proposed } });
      const answered = s.sim
        .mutate(20)
        .find((m) => m.requestId === id && m.kind.startsWith('proposal_'));
      expect(answered).toBeDefined();
      if (answered?.kind === 'proposal_accepted') {
        expect(truthOf(id).detail.transport_agreed_for_time).not.toBeNull();
        expect(truthOf(id).eventDtUtc).toBe(proposed);
      }
    });
  });

  it('records only 2xx actions', () => {
    expect(s.sim.actions.length).toBeGreaterThan(5);
    const kinds = new Set(s.sim.actions.map((a) => a.kind));
    expect(kinds).toEqual(
      new Set(['accept', 'decline', 'state', 'locations', 'change_request', 'best_time']),
    );
    expect(s.sim.actions.every((a) => a.requestId !== 'NOPE0000')).toBe(true);
  });
});
