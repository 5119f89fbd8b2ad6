import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { startOutboxDrainer } from '../../../src/outbox/index.js';
import { startMirror, type MirrorFixture } from '../../helpers/mirror.js';
import {
  deliveredTimestamps,
  outboxRows,
  queueAction,
  queueLocations,
  samplesFrom,
  tally,
} from '../../helpers/outbox.js';
import { T0 } from '../../helpers/simulator.js';

let f: MirrorFixture;
beforeEach(async () => {
  f = await startMirror({ requests: 10 });
});
afterEach(() => f.close());

describe('startOutboxDrainer', () => {
  it('drains at once and on its interval, never two passes at a time', async () => {
    const [trip] = f.sim.addRequests(1, { state: 'accepted', eventAt: T0 + 3_600_000 });
    await queueLocations(f.db, trip!, samplesFrom(T0 / 1000 - 900, 450));
    f.sim.setLatency(40); // each call takes a while, so a second pass would overlap the first
    const drainer = startOutboxDrainer({
      store: f.store,
      client: f.client,
      log: silentLogger(),
      clock: f.clock,
      intervalMs: 5,
    });
    // Asked for while the loop is due to run: one of the two waits for the other.
    const extra = await drainer.drainOnce();
    await queueAction(f.db, trip!, {
      kind: 'state',
      state_name: 'en_route',
      at: new Date(T0).toISOString(),
    });
    for (let i = 0; i < 100 && f.sim.actions.every((a) => a.kind !== 'state'); i += 1) {
      await delay(20);
    }
    await drainer.stop();

    expect([0, 450]).toContain(extra.locationsSent);
    const counts = tally(deliveredTimestamps(f.sim.actions, trip!));
    expect(counts.size).toBe(450);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect((await outboxRows(f.db, 'outbox_actions'))[0]!.status).toBe('sent');
  });

  it('stops after the call in flight, and starts no pass after stop', async () => {
    const trips = f.sim.addRequests(3, { state: 'accepted', eventAt: T0 + 3_600_000 });
    for (const trip of trips) await queueLocations(f.db, trip, samplesFrom(T0 / 1000, 5));
    f.sim.setLatency(100);
    const drainer = startOutboxDrainer({
      store: f.store,
      client: f.client,
      log: silentLogger(),
      clock: f.clock,
      intervalMs: 5,
    });
    // Asked to stop while the service handles the first call: that call completes, no other starts.
    const stopped = new Promise<void>((resolve) => {
      const push = f.sim.actions.push.bind(f.sim.actions);
      f.sim.actions.push = (...records) => {
        const length = push(...records);
        void drainer.stop().then(resolve);
        return length;
      };
    });
    await stopped;

    const rows = await outboxRows(f.db, 'outbox_locations');
    const sent = rows.filter((r) => r.status === 'sent');
    // The call in flight finished and was stored; no other request was started.
    expect(sent).toHaveLength(5);
    expect(rows.filter((r) => r.status === 'pending' && r.attempts === 0)).toHaveLength(10);
    const calls = f.sim.calls.length;
    await delay(50);
    expect(f.sim.calls.length).toBe(calls);
  });
});
