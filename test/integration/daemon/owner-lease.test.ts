import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../../src/db/open.js';
import { createStore } from '../../../src/db/store.js';
import { acquireOwnerLease, LEASE_EXPIRY_MS } from '../../../src/daemon/owner-lease.js';
import { isTransportError } from '../../../src/errors.js';
import { manualClock } from '../../helpers/simulator.js';
import { createMigratedTestDatabase } from '../../helpers/engine.js';

describe('the daemon owner lease', () => {
  it('refuses a second owner while the first is alive, and hands over when it lapses or is released', async () => {
    const database = await createMigratedTestDatabase('lease.db');
    onTestFinished(() => database.drop());
    const a = await openDatabase({ location: database.location });
    const b = await openDatabase({ location: database.location });
    const clock = manualClock();
    const storeA = createStore({ db: a, clock });
    const storeB = createStore({ db: b, clock });
    let isFirstLost = false;
    // process.pid: a holder that is alive (its pid exists on this host).
    const first = await acquireOwnerLease({
      store: storeA,
      clock,
      pid: process.pid,
      onLost: () => (isFirstLost = true),
    });
    let refusal: unknown;
    try {
      await acquireOwnerLease({ store: storeB, clock, pid: 222 });
    } catch (error) {
      refusal = error;
    }
    expect(isTransportError(refusal, 'daemon.already_running')).toBe(true);
    expect((refusal as Error).message).toContain(`pid ${process.pid}`);

    // Killed without releasing: once the lease lapses, a successor takes over.
    clock.advance(LEASE_EXPIRY_MS + 1);
    const second = await acquireOwnerLease({ store: storeB, clock, pid: 222 });
    // The first wakes up from its stall: its renewal finds the lease gone and it steps down.
    await first.renew();
    expect(isFirstLost).toBe(true);
    await second.release();
    // A holder whose process is gone from this host is replaced at once, lapsed or not.
    const gone = await acquireOwnerLease({ store: storeA, clock, pid: 2 ** 22 + 7 });
    await (await acquireOwnerLease({ store: storeB, clock, pid: process.pid })).release();
    await gone.release();
    // Released: the next starts at once.
    await (await acquireOwnerLease({ store: storeA, clock, pid: 333 })).release();
    await first.release();
    await a.close();
    await b.close();
  });
});
