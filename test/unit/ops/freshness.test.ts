import { afterEach, describe, expect, it } from 'vitest';
import { sqliteOf } from '../../helpers/engine.js';
import { openDatabase, type MirrorDb } from '../../../src/db/open.js';
import { assessFreshness, createReadiness, pollIntervalMs } from '../../../src/ops/freshness.js';
import { createProgressCheck } from '../../../src/ops/watchdog.js';
import { LAST_SUCCESS_KEY } from '../../../src/sync/poll.js';

const T0 = Date.UTC(2025, 5, 15, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

let db: MirrorDb | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
});

describe('the poll interval of a cron pattern', () => {
  it('is the gap between the next two runs', () => {
    expect(pollIntervalMs('0 * * * * *', T0)).toBe(60_000);
    expect(pollIntervalMs('*/5 * * * *', T0)).toBe(300_000);
    expect(pollIntervalMs('*/2 * * * * *', T0 + 500)).toBe(2000);
  });
});

describe('freshness', () => {
  const base = { nowMs: T0, pollCron: '0 * * * * *', staleAfterCycles: 3 };

  it('is stale before any success', () => {
    expect(assessFreshness({ ...base, lastSuccessAt: null })).toEqual({
      lastSuccessAt: null,
      freshnessSeconds: null,
      pollIntervalSeconds: 60,
      staleAfterSeconds: 180,
      isStale: true,
    });
  });

  it('is fresh up to staleAfterCycles intervals, stale past them', () => {
    const at = (ageMs: number) => assessFreshness({ ...base, lastSuccessAt: iso(T0 - ageMs) });
    expect(at(42_500)).toMatchObject({ freshnessSeconds: 42, isStale: false });
    expect(at(180_000)).toMatchObject({ freshnessSeconds: 180, isStale: false });
    expect(at(180_001)).toMatchObject({ freshnessSeconds: 180, isStale: true });
  });

  it('over a pause in the schedule, counts the cycles that were due, not the hours', () => {
    // Every 5 minutes from 06:00 to 20:55, server time: nothing runs overnight.
    const pollCron = '0 */5 6-20 * * *';
    const lastSuccessAt = iso(new Date(2025, 5, 15, 20, 55, 3).getTime());
    const at = (nowMs: number) =>
      assessFreshness({ lastSuccessAt, nowMs, pollCron, staleAfterCycles: 3 });
    expect(at(new Date(2025, 5, 15, 23, 0, 0).getTime())).toMatchObject({ isStale: false });
    expect(at(new Date(2025, 5, 16, 6, 9, 0).getTime())).toMatchObject({ isStale: false });
    // The third run after the success (06:10) passed without one: stale.
    expect(at(new Date(2025, 5, 16, 6, 10, 4).getTime())).toMatchObject({
      isStale: true,
      staleAfterSeconds: 9 * 3600 + 14 * 60 + 57,
    });
    // During working hours it is the usual three intervals.
    const daytime = assessFreshness({
      lastSuccessAt: iso(new Date(2025, 5, 16, 10, 0, 2).getTime()),
      nowMs: new Date(2025, 5, 16, 10, 15, 3).getTime(),
      pollCron,
      staleAfterCycles: 3,
    });
    expect(daytime).toMatchObject({ staleAfterSeconds: 900, isStale: true });
  });

  it('counts a success in the future (a clock stepped back) as just now', () => {
    expect(assessFreshness({ ...base, lastSuccessAt: iso(T0 + 5000) })).toMatchObject({
      freshnessSeconds: 0,
      isStale: false,
    });
  });
});

describe('readiness', () => {
  it('reads the last success from sync_state at every call', async () => {
    db = await openDatabase({ location: ':memory:' });
    let now = T0;
    const readiness = createReadiness({
      db,
      now: () => now,
      pollCron: '0 * * * * *',
      staleAfterCycles: 2,
      isPollingOn: true,
    });
    expect(await readiness()).toMatchObject({
      ready: false,
      reason: 'no poll cycle has completed yet',
    });
    sqliteOf(db)
      .prepare('INSERT INTO sync_state (key, value, updated_at) VALUES (?, ?, ?)')
      .run(LAST_SUCCESS_KEY, iso(T0), iso(T0));
    expect(await readiness()).toMatchObject({ ready: true, reason: 'fresh', freshnessSeconds: 0 });
    now = T0 + 121_000;
    expect(await readiness()).toEqual({
      ready: false,
      reason: 'the last successful cycle is 121 s old (stale after 120 s)',
      lastSuccessAt: iso(T0),
      freshnessSeconds: 121,
      staleAfterSeconds: 120,
    });
  });

  it('is ready with polling off and a webhook receiver: nothing to be fresh about', async () => {
    db = await openDatabase({ location: ':memory:' });
    const readiness = createReadiness({
      db,
      now: () => T0,
      pollCron: '0 * * * * *',
      staleAfterCycles: 2,
      isPollingOn: false,
      hasWebhooks: true,
    });
    expect(await readiness()).toMatchObject({ ready: true });
  });

  it('is never ready with polling off and no receiver: nothing can bring data in', async () => {
    db = await openDatabase({ location: ':memory:' });
    const readiness = createReadiness({
      db,
      now: () => T0,
      pollCron: '0 * * * * *',
      staleAfterCycles: 2,
      isPollingOn: false,
    });
    expect(await readiness()).toMatchObject({
      ready: false,
      reason: expect.stringMatching(/no webhook receiver is configured.*TRANSPORT_WEBHOOK_LISTEN/),
    });
  });
});

describe('the scheduler progress check behind the watchdog', () => {
  it('holds while the last progress is within interval + deadline + grace', () => {
    let now = T0;
    const isProgressing = createProgressCheck({
      lastProgressAt: () => T0,
      pollCron: '0 * * * * *',
      cycleDeadlineMs: 600_000,
      now: () => now,
    });
    expect(isProgressing()).toBe(true);
    now = T0 + 60_000 + 600_000 + 30_000;
    expect(isProgressing()).toBe(true);
    now += 1;
    expect(isProgressing()).toBe(false);
  });

  it('holds overnight for a schedule that pauses, until the morning tick is overdue', () => {
    const lastTick = new Date(2025, 5, 15, 20, 55, 0).getTime();
    let now = new Date(2025, 5, 16, 3, 0, 0).getTime();
    const isProgressing = createProgressCheck({
      lastProgressAt: () => lastTick,
      pollCron: '0 */5 6-20 * * *',
      cycleDeadlineMs: 600_000,
      now: () => now,
    });
    expect(isProgressing()).toBe(true);
    now = new Date(2025, 5, 16, 6, 0, 0).getTime() + 600_000 + 30_000;
    expect(isProgressing()).toBe(true);
    now += 1;
    expect(isProgressing()).toBe(false);
  });
});
