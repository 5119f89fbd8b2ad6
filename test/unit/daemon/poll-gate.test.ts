import { describe, expect, it } from 'vitest';
import { createPollGate, RETIRED_PROBE_INTERVAL_MS } from '../../../src/daemon/poll-gate.js';
import { openDatabase } from '../../../src/db/open.js';
import { createStore } from '../../../src/db/store.js';
import { silentLogger } from '../../../src/log.js';
import { readPollingRetiredAt } from '../../../src/ops/mode.js';
import { manualClock } from '../../helpers/simulator.js';

const gone = { isPollingRetired: true, isListComplete: false };
const answered = { isPollingRetired: false, isListComplete: true };

describe('the poll gate of TRANSPORT_POLL=auto', () => {
  it('stops polling when the lists are gone, probes once a day, and resumes when they answer', async () => {
    const db = await openDatabase({ location: ':memory:' });
    const clock = manualClock();
    const store = createStore({ db, clock });
    const gate = await createPollGate({ mode: 'auto', store, clock, log: silentLogger() });
    expect(gate.shouldPoll()).toBe(true);
    await gate.observe(gone);
    expect(gate.isPolling()).toBe(false);
    expect(await readPollingRetiredAt(db)).toBe(store.now());
    clock.advance(RETIRED_PROBE_INTERVAL_MS - 1000);
    expect(gate.shouldPoll()).toBe(false);
    clock.advance(1000);
    expect(gate.shouldPoll()).toBe(true); // the daily probe
    expect(gate.shouldPoll()).toBe(false); // and only one
    await gate.observe(gone);
    clock.advance(RETIRED_PROBE_INTERVAL_MS);
    expect(gate.shouldPoll()).toBe(true);
    await gate.observe(answered);
    expect(gate.isPolling()).toBe(true);
    expect(await readPollingRetiredAt(db)).toBeNull();
    expect(gate.shouldPoll()).toBe(true);
    // A restart finds the mark and probes at once.
    await gate.observe(gone);
    const restarted = await createPollGate({ mode: 'auto', store, clock, log: silentLogger() });
    expect(restarted.isPolling()).toBe(false);
    expect(restarted.shouldPoll()).toBe(true);
    expect(restarted.shouldPoll()).toBe(false);
    await db.close();
  });

  it('with TRANSPORT_POLL=on keeps polling whatever the lists answer', async () => {
    const db = await openDatabase({ location: ':memory:' });
    const clock = manualClock();
    const store = createStore({ db, clock });
    const gate = await createPollGate({ mode: 'on', store, clock, log: silentLogger() });
    await gate.observe(gone);
    expect(gate.shouldPoll()).toBe(true);
    expect(gate.isPolling()).toBe(true);
    await db.close();
  });
});
