import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/open.js';
import { acquireOwnerLease, LEASE_EXPIRY_MS } from '../../../src/daemon/owner-lease.js';
import { isTransportError } from '../../../src/errors.js';
import { manualClock } from '../../helpers/simulator.js';
import { tempDir } from '../../helpers/records.js';

describe('the daemon owner lease', () => {
  it('refuses a second owner while the first is alive, and hands over when it lapses or is released', () => {
    const path = join(tempDir(), 'lease.db');
    const a = openDatabase({ path });
    const b = openDatabase({ path });
    const clock = manualClock();
    let isFirstLost = false;
    // process.pid: a holder that is alive (its pid exists on this host).
    const first = acquireOwnerLease({
      sqlite: a.sqlite,
      clock,
      pid: process.pid,
      onLost: () => (isFirstLost = true),
    });
    let refusal: unknown;
    try {
      acquireOwnerLease({ sqlite: b.sqlite, clock, pid: 222 });
    } catch (error) {
      refusal = error;
    }
    expect(isTransportError(refusal, 'daemon.already_running')).toBe(true);
    expect((refusal as Error).message).toContain(`pid ${process.pid}`);

    // Killed without releasing: once the lease lapses, a successor takes over.
    clock.advance(LEASE_EXPIRY_MS + 1);
    const second = acquireOwnerLease({ sqlite: b.sqlite, clock, pid: 222 });
    // The first wakes up from its stall: its renewal finds the lease gone and it steps down.
    first.renew();
    expect(isFirstLost).toBe(true);
    second.release();
    // A holder whose process is gone from this host is replaced at once, lapsed or not.
    const gone = acquireOwnerLease({ sqlite: a.sqlite, clock, pid: 2 ** 22 + 7 });
    acquireOwnerLease({ sqlite: b.sqlite, clock, pid: process.pid }).release();
    gone.release();
    // Released: the next starts at once.
    acquireOwnerLease({ sqlite: a.sqlite, clock, pid: 333 }).release();
    first.release();
    a.close();
    b.close();
  });
});
