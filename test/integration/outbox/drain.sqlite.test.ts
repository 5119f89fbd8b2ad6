import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { drainOutbox } from '../../../src/outbox/index.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import {
  deliveredTimestamps,
  outboxRows,
  queueAction,
  queueLocations,
} from '../../helpers/outbox.js';
import { T0 } from '../../helpers/simulator.js';

/*
 * Values of the wrong type, which only SQLite stores: its columns take any value, so another
 * program can queue text where a number or a time belongs, and the drainer must fail that row
 * with a reason and send the rows behind it. PostgreSQL's column types (double precision,
 * timestamptz) refuse such a row at the INSERT. These are the invalid-row tests of
 * drain.test.ts with those rows in.
 */

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

describe('outbox rows holding values of the wrong type', () => {
  it('fails invalid rows with a reason and sends the rows behind them', async () => {
    const id = fresh('accepted');
    await queueLocations(f.db, id, [
      { lat: 41.8, lng: -87.6, alt: 180, timestamp: T0_SEC - 50 },
      { lng: -87.6, alt: 180, timestamp: T0_SEC - 40 },
      { lat: 41.8, lng: 'north', alt: 180, timestamp: T0_SEC - 30 },
      { lat: 141.8, lng: -87.6, alt: 180, timestamp: T0_SEC - 25 },
      { lat: 41.8, lng: -87.6, alt: 180 },
      { lat: 41.8, lng: -87.6, alt: 181, speed: 12.5, timestamp: T0_SEC - 20 },
    ]);

    const summary = await drain();

    expect(summary).toMatchObject({ locationsSent: 2, locationCalls: 1, failed: 4 });
    expect(deliveredTimestamps(f.sim.actions, id)).toEqual([T0_SEC - 50, T0_SEC - 20]);
    const byStatus = (await outboxRows(f.db, 'outbox_locations')).map((r) => [
      r.status,
      r.last_error,
    ]);
    expect(byStatus).toEqual([
      ['sent', null],
      ['failed', 'invalid row: lat is missing'],
      ['failed', 'invalid row: lng is not a number'],
      ['failed', expect.stringMatching(/^invalid row: lat: /)],
      ['failed', 'invalid row: timestamp is missing'],
      ['sent', null],
    ]);
  });

  it('sends each request in insertion order and fails bad rows without blocking the rest', async () => {
    const trip = fresh('accepted');
    const at = (minutesAgo: number) => new Date(T0 - minutesAgo * 60_000).toISOString();
    await queueAction(f.db, trip, { kind: 'state', state_name: 'parked', at: at(30) });
    await queueAction(f.db, trip, { kind: 'state', state_name: 'en_route', at: at(20) });
    await queueAction(f.db, trip, { kind: 'accept', notes: 'x'.repeat(451) });
    await queueAction(f.db, trip, { kind: 'teleport' });
    await queueAction(f.db, trip, { kind: 'state', state_name: 'arrived', at: at(5) });
    await queueAction(f.db, trip, { kind: 'state', state_name: 'on_board', at: 'half past' });
    await queueAction(f.db, trip, {
      kind: 'change_request',
      at: new Date(T0 + 2 * HOUR).toISOString(),
      reason: 'crew delayed',
    });

    expect(await drain()).toMatchObject({ actionsSent: 3, failed: 4 });

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
      'invalid row: state timestamp is not an ISO-8601 timestamp',
      null,
    ]);
  });
});
