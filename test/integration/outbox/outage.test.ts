import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { drainOutbox, type DrainSummary } from '../../../src/outbox/index.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import {
  actionsOf,
  deliveredTimestamps,
  outboxRows,
  queueAction,
  queueLocations,
  samplesFrom,
  tally,
} from '../../helpers/outbox.js';
import { manualClock, T0 } from '../../helpers/simulator.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0_SEC = T0 / 1000;

let f: MirrorFixture;
beforeEach(async () => {
  f = await startMirror({ requests: 20 });
});
afterEach(() => f.close());

const drain = (clock = f.clock) =>
  drainOutbox({ store: f.store, client: f.client, log: silentLogger(), clock });
const fresh = (state: 'awaiting' | 'accepted') =>
  f.sim.addRequests(1, { state, eventAt: T0 + 5 * HOUR })[0]!;
const iso = (ms: number) => new Date(ms).toISOString();
const allRows = async () => [
  ...(await outboxRows(f.db, 'outbox_locations')),
  ...(await outboxRows(f.db, 'outbox_actions')),
];

/** Drains every `stepMs` of simulated time for `totalMs`, returning each pass's summary. */
async function drainFor(totalMs: number, stepMs: number): Promise<DrainSummary[]> {
  const summaries: DrainSummary[] = [];
  for (let elapsed = 0; elapsed <= totalMs; elapsed += stepMs) {
    summaries.push(await drain());
    f.clock.advance(stepMs);
  }
  return summaries;
}

/** A mixed queue over four requests; returns their ids and the samples queued. */
async function queueMixed() {
  const trip = fresh('accepted');
  const second = fresh('accepted');
  const toAccept = fresh('awaiting');
  const toDecline = fresh('awaiting');
  const tripSamples = samplesFrom(T0_SEC - 900, 450);
  const secondSamples = samplesFrom(T0_SEC - 300, 30);
  await queueLocations(f.db, trip, tripSamples);
  await queueLocations(f.db, second, secondSamples);
  await queueAction(f.db, toAccept, { kind: 'accept', notes: 'on our way' });
  await queueAction(f.db, toDecline, { kind: 'decline' });
  await queueAction(f.db, trip, { kind: 'state', state_name: 'en_route', at: iso(T0 - 60_000) });
  await queueAction(f.db, trip, { kind: 'state', state_name: 'arrived', at: iso(T0) });
  return { trip, second, toAccept, toDecline, tripSamples, secondSamples };
}

async function expectEachDeliveredOnce(q: Awaited<ReturnType<typeof queueMixed>>): Promise<void> {
  expect((await allRows()).every((row) => row.status === 'sent')).toBe(true);
  expect(deliveredTimestamps(f.sim.actions, q.trip)).toEqual(q.tripSamples.map((s) => s.timestamp));
  expect(deliveredTimestamps(f.sim.actions, q.second)).toEqual(
    q.secondSamples.map((s) => s.timestamp),
  );
  expect(actionsOf(f.sim, 'accept')).toEqual(new Map([[q.toAccept, 1]]));
  expect(actionsOf(f.sim, 'decline')).toEqual(new Map([[q.toDecline, 1]]));
  const states = f.sim.actions.filter((a) => a.kind === 'state');
  expect(states.map((a) => (a.body as { name: string }).name)).toEqual(['en_route', 'arrived']);
}

describe('connectivity loss', () => {
  it('delivers every queued row exactly once after minutes without the service', async () => {
    const q = await queueMixed();
    const port = Number(new URL(f.sim.url!).port);
    await f.sim.close(); // connection refused from now on

    const during = await drainFor(8 * 60_000, 20_000);
    expect(during.every((s) => s.isServiceDown && s.actionsSent + s.locationsSent === 0)).toBe(
      true,
    );
    expect((await allRows()).every((row) => row.status === 'pending')).toBe(true);
    // Refused connections certainly reached nothing: no row is marked as possibly delivered.
    expect((await allRows()).some((row) => row.last_error?.startsWith('outcome unknown'))).toBe(
      false,
    );
    expect(Math.max(...(await allRows()).map((row) => row.attempts))).toBeGreaterThan(3);

    await f.sim.listen(port);
    await drainFor(15 * 60_000, 60_000); // the longest backoff is 10 minutes

    await expectEachDeliveredOnce(q);
  });

  it('delivers every row exactly once through minutes of 5xx answers', async () => {
    const q = await queueMixed();
    // Action endpoints only: with the token endpoint failing too, nothing would be sent at all.
    f.sim.setFaults({ errorRate: 1, endpoints: ['accept', 'decline', 'state', 'locations_v2'] });
    const during = await drainFor(5 * 60_000, 15_000);
    expect(during.every((s) => s.actionsSent + s.locationsSent === 0)).toBe(true);
    expect(
      (await allRows()).some((row) => row.last_error?.startsWith('outcome unknown: api.server')),
    ).toBe(true);

    f.sim.setFaults({});
    await drainFor(15 * 60_000, 60_000);

    // The 5xx came before the handler, so the resends (and the read-backs of the accept and
    // decline) repeat nothing.
    await expectEachDeliveredOnce(q);
  });
});

describe('lost replies', () => {
  it('settles an accept and a decline whose replies were lost by reading them back', async () => {
    const toAccept = fresh('awaiting');
    const toDecline = fresh('awaiting');
    await queueAction(f.db, toAccept, { kind: 'accept' });
    await queueAction(f.db, toDecline, { kind: 'decline' });
    f.sim.setFaults({ dropRate: 1, endpoints: ['accept', 'decline'] });

    expect(await drain()).toMatchObject({ actionsSent: 0, deferred: 2 });
    expect((await outboxRows(f.db, 'outbox_actions')).map((r) => r.last_error)).toEqual([
      expect.stringMatching(/^outcome unknown: api\.network/),
      expect.stringMatching(/^outcome unknown: api\.network/),
    ]);

    f.sim.setFaults({});
    f.clock.advance(5_000);
    expect(await drain()).toMatchObject({ actionsSent: 2 });

    expect((await outboxRows(f.db, 'outbox_actions')).map((r) => [r.status, r.last_error])).toEqual(
      [
        ['sent', 'confirmed by reading the request back: it is assigned to us'],
        [
          'sent',
          'confirmed by reading the request back: it is no longer available to us, the decline stands',
        ],
      ],
    );
    const calls = f.sim.calls.filter((c) => c.endpoint === 'accept' || c.endpoint === 'decline');
    expect(calls).toHaveLength(2); // never sent a second time
  });

  it('resends a sample batch whose reply was lost: exactly that batch arrives twice', async () => {
    const trip = fresh('accepted');
    const samples = samplesFrom(T0_SEC - 900, 450);
    await queueLocations(f.db, trip, samples);
    f.sim.setFaults({ dropRate: 1, endpoints: ['locations_v2'] });
    await drain();
    const uncertain = (await outboxRows<{ timestamp: number }>(f.db, 'outbox_locations')).filter(
      (r) => r.last_error?.startsWith('outcome unknown'),
    );
    expect(uncertain).toHaveLength(200);

    f.sim.setFaults({});
    f.clock.advance(5_000);
    await drain();

    const counts = tally(deliveredTimestamps(f.sim.actions, trip));
    const twice = [...counts].filter(([, n]) => n === 2).map(([t]) => t);
    expect(twice.sort()).toEqual(uncertain.map((r) => r.timestamp).sort());
    expect([...counts.values()].every((n) => n === 1 || n === 2)).toBe(true);
    expect(counts.size).toBe(450);
  });
});

describe('stale state timestamps', () => {
  it('fails a state update that went stale while the service was away, without sending it', async () => {
    const trip = fresh('accepted');
    await queueAction(f.db, trip, {
      kind: 'state',
      state_name: 'completed',
      at: iso(T0 - 7 * DAY + 2 * 60_000),
    });
    const port = Number(new URL(f.sim.url!).port);
    await f.sim.close();
    await drainFor(3 * 60_000, 30_000);
    await f.sim.listen(port);
    await drainFor(20 * 60_000, 60_000);

    const [row] = await outboxRows(f.db, 'outbox_actions');
    expect(row).toMatchObject({
      status: 'failed',
      last_error: 'invalid row: state timestamp is older than 7 days (stale)',
    });
    expect(f.sim.calls.filter((c) => c.endpoint === 'state')).toHaveLength(0);
  });

  it('fails a state update the service calls stale with its message, and does not retry it', async () => {
    const trip = fresh('accepted');
    // Our clock a day behind the service's: the timestamp passes here and is stale there.
    const lagging = manualClock(T0 - DAY);
    await queueAction(f.db, trip, {
      kind: 'state',
      state_name: 'arrived',
      at: iso(T0 - DAY - 6.5 * DAY),
    });

    expect(await drain(lagging)).toMatchObject({ failed: 1, deferred: 0 });
    const [row] = await outboxRows(f.db, 'outbox_actions');
    expect(row).toMatchObject({
      status: 'failed',
      attempts: 1,
      last_error: 'rejected as invalid (400): timestamp: Timestamp is older than 7 days.',
    });
    lagging.advance(HOUR);
    await drain(lagging);
    expect(f.sim.calls.filter((c) => c.endpoint === 'state')).toHaveLength(1);
  });
});
