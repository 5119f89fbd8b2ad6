import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { drainOutbox } from '../../../src/outbox/index.js';
import { queryOne } from '../../helpers/engine.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import {
  actionsOf,
  deliveredTimestamps,
  outboxRows,
  queueAction,
  queueLocations,
  samplesFrom,
} from '../../helpers/outbox.js';
import { T0 } from '../../helpers/simulator.js';

const HOUR = 3_600_000;
const T0_SEC = T0 / 1000;

let f: MirrorFixture;
beforeEach(async () => {
  f = await startMirror({ requests: 20 });
});
afterEach(() => f.close());

const drain = () =>
  drainOutbox({ store: f.store, client: f.client, log: silentLogger(), clock: f.clock });
const fresh = (state: 'awaiting' | 'accepted') =>
  f.sim.addRequests(1, { state, eventAt: T0 + 5 * HOUR })[0]!;
const nowIso = () => new Date(f.clock.now()).toISOString();

describe('outbox_locations', () => {
  it('sends 450 queued samples as three calls of at most 200, in timestamp order', async () => {
    const id = fresh('accepted');
    const samples = samplesFrom(T0_SEC - 3600, 450);
    // Inserted out of order: the drainer sorts by timestamp, not by insertion.
    await queueLocations(f.db, id, [...samples].reverse());

    const summary = await drain();

    expect(summary).toMatchObject({ locationsSent: 450, locationCalls: 3, failed: 0 });
    const calls = f.sim.calls.filter((call) => call.endpoint === 'locations_v2');
    expect(calls).toHaveLength(3);
    const batches = f.sim.actions.filter((a) => a.kind === 'locations');
    expect(batches.map((b) => (b.body as unknown[]).length)).toEqual([200, 200, 50]);
    expect(deliveredTimestamps(f.sim.actions, id)).toEqual(samples.map((s) => s.timestamp));
    const rows = await outboxRows(f.db, 'outbox_locations');
    expect(
      rows.every((r) => r.status === 'sent' && r.attempts === 1 && r.last_error === null),
    ).toBe(true);
    expect(rows[0]!.sent_at).toBe(nowIso());

    expect(await drain()).toMatchObject({ locationsSent: 0, locationCalls: 0 });
  });

  it('sends to the v1.0 path instead with TRANSPORT_LOCATIONS_API=v1, batched and ordered alike', async () => {
    await f.close();
    f = await startMirror({ requests: 20, clientOptions: { locationsApi: 'v1' } });
    const id = fresh('accepted');
    const samples = samplesFrom(T0_SEC - 3600, 250);
    await queueLocations(f.db, id, [...samples].reverse());
    expect(await drain()).toMatchObject({ locationsSent: 250, locationCalls: 2, failed: 0 });
    expect(f.sim.calls.filter((call) => call.endpoint === 'locations')).toHaveLength(2);
    expect(f.sim.calls.filter((call) => call.endpoint === 'locations_v2')).toHaveLength(0);
    expect(deliveredTimestamps(f.sim.actions, id)).toEqual(samples.map((s) => s.timestamp));
  });

  // A value of the wrong type (text in a number column) is drain.sqlite.test.ts's: only SQLite
  // stores one; PostgreSQL refuses it at the INSERT.
  it('fails invalid rows with a reason and sends the rows behind them', async () => {
    const id = fresh('accepted');
    await queueLocations(f.db, id, [
      { lat: 41.8, lng: -87.6, alt: 180, timestamp: T0_SEC - 50 },
      { lng: -87.6, alt: 180, timestamp: T0_SEC - 40 },
      { lat: 141.8, lng: -87.6, alt: 180, timestamp: T0_SEC - 25 },
      { lat: 41.8, lng: -87.6, alt: 180 },
      { lat: 41.8, lng: -87.6, alt: 181, speed: 12.5, timestamp: T0_SEC - 20 },
    ]);

    const summary = await drain();

    expect(summary).toMatchObject({ locationsSent: 2, locationCalls: 1, failed: 3 });
    expect(deliveredTimestamps(f.sim.actions, id)).toEqual([T0_SEC - 50, T0_SEC - 20]);
    const byStatus = (await outboxRows(f.db, 'outbox_locations')).map((r) => [
      r.status,
      r.last_error,
    ]);
    expect(byStatus).toEqual([
      ['sent', null],
      ['failed', 'invalid row: lat is missing'],
      ['failed', expect.stringMatching(/^invalid row: lat: /)],
      ['failed', 'invalid row: timestamp is missing'],
      ['sent', null],
    ]);
  });

  it('fails every batch of an unknown request with the 404, without retrying', async () => {
    await queueLocations(f.db, 'NOPE0000', samplesFrom(T0_SEC, 3));
    expect(await drain()).toMatchObject({ failed: 3, deferred: 0 });
    const rows = await outboxRows(f.db, 'outbox_locations');
    expect(new Set(rows.map((r) => r.last_error))).toEqual(
      new Set(['unknown request id (404); the service said: Not found.']),
    );
    f.clock.advance(HOUR);
    await drain();
    expect(f.sim.calls.filter((c) => c.endpoint === 'locations_v2')).toHaveLength(1);
  });
});

describe('outbox_actions', () => {
  // A state timestamp that is no time at all is drain.sqlite.test.ts's: PostgreSQL's timestamptz
  // column refuses it at the INSERT.
  it('sends each request in insertion order and fails bad rows without blocking the rest', async () => {
    const trip = fresh('accepted');
    const at = (minutesAgo: number) => new Date(T0 - minutesAgo * 60_000).toISOString();
    await queueAction(f.db, trip, { kind: 'state', state_name: 'parked', at: at(30) });
    await queueAction(f.db, trip, { kind: 'state', state_name: 'en_route', at: at(20) });
    await queueAction(f.db, trip, { kind: 'accept', notes: 'x'.repeat(451) });
    await queueAction(f.db, trip, { kind: 'teleport' });
    await queueAction(f.db, trip, { kind: 'state', state_name: 'arrived', at: at(5) });
    await queueAction(f.db, trip, {
      kind: 'change_request',
      at: new Date(T0 + 2 * HOUR).toISOString(),
      reason: 'crew delayed',
    });

    expect(await drain()).toMatchObject({ actionsSent: 3, failed: 3 });

    const sent = f.sim.actions.filter((a) => a.requestId === trip);
    expect(sent.map((a) => [a.kind, (a.body as { name?: string }).name])).toEqual([
      ['state', 'en_route'],
      ['state', 'arrived'],
      ['change_request', undefined],
    ]);
    expect((await outboxRows(f.db, 'outbox_actions')).map((r) => r.last_error)).toEqual([
      expect.stringMatching(/^invalid row: unknown state name; expected one of en_route/),
      null,
      'invalid row: notes is 451 characters long; at most 450 are allowed',
      expect.stringMatching(/^invalid row: unknown kind/),
      null,
      null,
    ]);
  });

  it('refreshes the mirror row at once after an accept and a decline', async () => {
    const accepted = fresh('awaiting');
    const declined = fresh('awaiting');
    await f.cycle(); // both stored as awaiting
    await queueAction(f.db, accepted, { kind: 'accept', notes: 'ETA 20 min' });
    await queueAction(f.db, declined, { kind: 'decline' });

    expect(await drain()).toMatchObject({ actionsSent: 2, failed: 0 });

    const row = (id: string) =>
      queryOne<{ list_state: string; source: string; unavailable_at: string | null }>(
        f.db,
        'SELECT list_state, source, unavailable_at FROM requests WHERE request_id = @id',
        { id },
      );
    expect(await row(accepted)).toMatchObject({ list_state: 'accepted', source: 'action' });
    expect((await row(declined))!.unavailable_at).toBe(nowIso());
    expect(f.sim.actions.find((a) => a.kind === 'accept')?.body).toEqual({
      response_notes: 'ETA 20 min',
    });
  });

  it('fails an accept of a request already taken with the 403, and never retries it', async () => {
    const taken = fresh('accepted');
    await queueAction(f.db, taken, { kind: 'accept' });
    await queueAction(f.db, 'NOPE0000', { kind: 'decline' });

    expect(await drain()).toMatchObject({ actionsSent: 0, failed: 2, deferred: 0 });
    const [accept, decline] = await outboxRows(f.db, 'outbox_actions');
    expect(accept).toMatchObject({
      status: 'failed',
      attempts: 1,
      last_error: expect.stringMatching(
        /^not available to you: already assigned, declined or canceled \(403\); the service said: /,
      ),
    });
    expect(decline).toMatchObject({
      status: 'failed',
      last_error: 'unknown request id (404); the service said: Not found.',
    });
    f.clock.advance(HOUR);
    await drain();
    expect(
      f.sim.calls.filter((c) => c.endpoint === 'accept' || c.endpoint === 'decline'),
    ).toHaveLength(2);
  });

  it('holds back only the failing request: others go on, and it resumes after its backoff', async () => {
    const slow = fresh('awaiting');
    const other = fresh('accepted');
    await queueAction(f.db, slow, { kind: 'accept' });
    await queueAction(f.db, slow, { kind: 'state', state_name: 'en_route', at: nowIso() });
    await queueAction(f.db, other, { kind: 'state', state_name: 'en_route', at: nowIso() });
    // 5xx on accept only: answered before the service handles it, though the client cannot know.
    f.sim.setFaults({ errorRate: 1, endpoints: ['accept'] });

    expect(await drain()).toMatchObject({ actionsSent: 1, deferred: 1, isServiceDown: false });
    const [first, second] = await outboxRows(f.db, 'outbox_actions');
    expect(first).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_error: expect.stringMatching(/^outcome unknown: api.server: /),
      next_attempt_at: new Date(T0 + 5_000).toISOString(),
    });
    expect(second).toMatchObject({ status: 'pending', attempts: 0 });

    f.sim.setFaults({});
    expect(await drain()).toMatchObject({ actionsSent: 0 }); // still in its backoff
    f.clock.advance(5_000);
    expect(await drain()).toMatchObject({ actionsSent: 2 });

    // The unknown outcome was settled by reading the request back, then the accept went once.
    expect(actionsOf(f.sim, 'accept').get(slow)).toBe(1);
    expect(f.sim.actions.filter((a) => a.requestId === slow).map((a) => a.kind)).toEqual([
      'accept',
      'state',
    ]);
    expect((await outboxRows(f.db, 'outbox_actions')).map((r) => r.status)).toEqual([
      'sent',
      'sent',
      'sent',
    ]);
  });
});

describe('an action and samples queued in one transaction', () => {
  it('sends the action first, even when they commit while a pass reads what is due', async () => {
    const trip = fresh('accepted');
    // Another program commits both while the pass is between its reads of the outbox.
    let isQueued = false;
    const store: typeof f.store = {
      ...f.store,
      read: async (work, options) => {
        const result = await f.store.read(work, options);
        if (!isQueued) {
          isQueued = true;
          await f.db.transaction(async (sql) => {
            await sql.run(
              `INSERT INTO outbox_locations (request_id, lat, lng, alt, timestamp)
               VALUES (@id, 41.8, -87.6, 180, @timestamp)`,
              { id: trip, timestamp: T0_SEC - 30 },
            );
            await sql.run(
              `INSERT INTO outbox_actions (request_id, kind, state_name, at)
               VALUES (@id, 'state', 'en_route', @at)`,
              { id: trip, at: new Date(T0 - 60_000).toISOString() },
            );
          });
        }
        return result;
      },
    };
    const pass = () =>
      drainOutbox({ store, client: f.client, log: silentLogger(), clock: f.clock });

    await pass();
    await pass();

    expect(f.sim.actions.filter((a) => a.requestId === trip).map((a) => a.kind)).toEqual([
      'state',
      'locations',
    ]);
  });
});
