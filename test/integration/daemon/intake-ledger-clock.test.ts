import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { INTAKE_HEARTBEAT_KEY, startIntakeLedger } from '../../../src/daemon/intake-ledger.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { createStore, type Store } from '../../../src/db/store.js';
import { readIntakeGaps } from '../../../src/db/store/intake-gap-store.js';
import { isoFromMs } from '../../../src/time.js';
import { captureLogger } from '../../helpers/api.js';
import { createMigratedTestDatabase, type TestDatabase } from '../../helpers/engine.js';
import { manualClock, type ManualClock } from '../../helpers/simulator.js';

/*
 * The ledger's judgement on an injected clock: the heartbeat's interval runs on fake timers
 * moved in step with the clock, so a crash, a failing store and the alarm threshold are judged
 * at any pace, in milliseconds of real time. Only setInterval is faked: the database's own
 * timers (PostgreSQL) keep real time.
 */

const ALARM_SECONDS = 90;
const INTERVAL_MS = 5_000;

let database: TestDatabase;
let db: MirrorDb;
let store: Store;
let clock: ManualClock;

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  database = await createMigratedTestDatabase();
  db = await openDatabase({ location: database.location });
  clock = manualClock();
  store = createStore({ db, clock });
});

afterEach(async () => {
  vi.useRealTimers();
  await db?.close();
  await database?.drop();
});

const start = (options: { store?: Store; minGapMs?: number } = {}) => {
  const { log, lines } = captureLogger();
  const ledger = startIntakeLedger({
    store,
    clock,
    log,
    alarmSeconds: ALARM_SECONDS,
    intervalMs: INTERVAL_MS,
    ...options,
  });
  const logged = (level: number) =>
    lines
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((line) => line.level === level);
  return { ledger, logged };
};

/** Time passes on the clock and on the heartbeat's timer alike. */
async function pass(ms: number): Promise<void> {
  clock.advance(ms);
  await vi.advanceTimersByTimeAsync(ms);
}

/** Retries `check` until it passes: a beat writes on its own, after the timer fired. */
async function eventually(check: () => Promise<void>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const heartbeat = () => store.read((tx) => tx.state.get(INTAKE_HEARTBEAT_KEY));
const gaps = async () => (await readIntakeGaps(db, 20)).last.reverse();

describe('the intake ledger on an injected clock', () => {
  it('measures a crash from the last heartbeat, which the interval keeps within one beat of it', async () => {
    const t0 = clock.now();
    await start().ledger;
    for (let beat = 1; beat <= 3; beat += 1) {
      await pass(INTERVAL_MS);
      await eventually(async () =>
        expect(await heartbeat()).toBe(isoFromMs(t0 + beat * INTERVAL_MS)),
      );
    }
    // Killed 4 s after the third beat: no last heartbeat at the stop. Down for 20 s more.
    clock.advance(4_000);
    vi.clearAllTimers();
    clock.advance(20_000);
    await start().ledger;

    const [gap, ...rest] = await gaps();
    expect(rest).toEqual([]);
    expect(gap).toMatchObject({
      started_at: isoFromMs(t0 + 3 * INTERVAL_MS),
      ended_at: isoFromMs(clock.now()),
      reason: 'daemon_down',
      is_alarmed: 0,
    });
    // The 24 s it counts are the 20 s down and the 4 s since the last beat: at most one interval more.
    expect(gap!.seconds).toBe(24);
  });

  it('alarms a gap longer than the threshold, not one of exactly the threshold', async () => {
    const first = await start().ledger;
    await first.stop();
    clock.advance(ALARM_SECONDS * 1000);
    const atThreshold = start();
    await (await atThreshold.ledger).stop();
    clock.advance(ALARM_SECONDS * 1000 + 1);
    const past = start();
    await (await past.ledger).stop();

    const [exact, longer] = await gaps();
    expect(exact).toMatchObject({ seconds: ALARM_SECONDS, is_alarmed: 0 });
    expect(atThreshold.logged(40)).toEqual([]);
    expect(longer).toMatchObject({ is_alarmed: 1 });
    expect(longer!.seconds).toBeCloseTo(ALARM_SECONDS + 0.001, 2);
    expect(past.logged(40).map((line) => line.msg)).toEqual([
      expect.stringMatching(/^intake gap longer than the service retries/),
    ]);
  });

  it('records the stretch in which the heartbeat could not be stored, once storing works again', async () => {
    let isBroken = false;
    const flaky: Store = {
      ...store,
      transaction: (work) =>
        isBroken ? Promise.reject(new Error('disk I/O error')) : store.transaction(work),
    };
    const { ledger, logged } = start({ store: flaky });
    await ledger;
    const brokeAt = clock.now() + INTERVAL_MS;
    isBroken = true;
    await pass(INTERVAL_MS);
    // Every beat fails for 100 s: the error is logged once, not at every beat.
    await pass(100_000);
    expect(logged(50).map((line) => line.msg)).toEqual([
      'intake heartbeat not stored: the receiver cannot store',
    ]);
    isBroken = false;
    await pass(INTERVAL_MS);

    await eventually(async () => expect(await gaps()).toHaveLength(1));
    const [gap] = await gaps();
    expect(gap).toMatchObject({
      started_at: isoFromMs(brokeAt),
      ended_at: isoFromMs(clock.now()),
      seconds: 105,
      reason: 'store_failed',
      is_alarmed: 1,
    });
    expect(await heartbeat()).toBe(isoFromMs(clock.now()));
  });

  it('records the stretch between the receiver failing to store and storing again', async () => {
    const ledger = await start().ledger;
    const failedAt = clock.now();
    ledger.onStoreFailed();
    clock.advance(10_000);
    // A second failure does not move the start of the stretch.
    ledger.onStoreFailed();
    clock.advance(20_000);
    ledger.onStored();

    await eventually(async () => expect(await gaps()).toHaveLength(1));
    expect((await gaps())[0]).toMatchObject({
      started_at: isoFromMs(failedAt),
      seconds: 30,
      reason: 'store_failed',
      is_alarmed: 0,
    });
  });

  it('counts no gap shorter than minGapMs (other daemons kept the heartbeat)', async () => {
    await (await start({ minGapMs: 2 * INTERVAL_MS }).ledger).stop();
    clock.advance(2 * INTERVAL_MS);
    await (await start({ minGapMs: 2 * INTERVAL_MS }).ledger).stop();
    expect(await gaps()).toEqual([]);
    clock.advance(2 * INTERVAL_MS + 1);
    await (await start({ minGapMs: 2 * INTERVAL_MS }).ledger).stop();
    expect(await gaps()).toHaveLength(1);
  });
});
