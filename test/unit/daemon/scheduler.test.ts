import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemClock, type Clock } from '../../../src/clock.js';
import {
  createScheduler,
  MAX_BACKOFF_MS,
  parseCronPattern,
  type Scheduler,
} from '../../../src/daemon/scheduler.js';
import { TransportError } from '../../../src/errors.js';
import { createLogger } from '../../../src/log.js';
import { createProgressCheck } from '../../../src/ops/watchdog.js';

/*
 * Simulated time: vitest's fake timers stand in for Date and the timer functions, and croner
 * schedules with exactly those (setTimeout, at most 30 s ahead, and `new Date()` to check that a
 * tick is due), so its ticks land on the whole second or minute, and so does every count below.
 * The scheduler's own clock is the system clock (unless a test passes another), whose now() and
 * sleep() use the same fakes.
 */
const T0 = Date.UTC(2026, 0, 28, 12, 0, 0); // a whole hour: every pattern here ticks on round offsets
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const EVERY_SECOND = '* * * * * *';
const ONCE_A_YEAR = '0 0 1 1 *';

let scheduler: Scheduler | undefined;
beforeEach(() => {
  vi.useFakeTimers({
    toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'],
    now: T0,
  });
});
afterEach(async () => {
  // stop() waits for a cycle still winding down on the fake timers (a test may end mid-cycle, or
  // fail midway): let them run.
  const stopping = scheduler?.stop();
  await vi.advanceTimersByTimeAsync(MINUTE);
  await stopping;
  scheduler = undefined;
  vi.useRealTimers();
});

/** Milliseconds of simulated time since the test began. */
const elapsed = () => Date.now() - T0;
/** Waits on the (fake) timers, as a cycle waiting on the network would. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Moves simulated time on, firing due timers and settling the promises they start. */
const advance = (ms: number) => vi.advanceTimersByTimeAsync(ms);

/** A started scheduler on a captured logger; `started` holds each cycle's start, as elapsed ms. */
function startScheduler(
  options: Omit<Parameters<typeof createScheduler>[0], 'log' | 'deadlineMs'> & {
    deadlineMs?: number;
  },
) {
  const lines: string[] = [];
  const log = createLogger({
    level: 'trace',
    destination: { write: (line: string) => lines.push(line) },
  });
  const started: number[] = [];
  const task = options.task;
  scheduler = createScheduler({
    deadlineMs: 10 * SECOND,
    ...options,
    log,
    task: (signal) => {
      started.push(elapsed());
      return task(signal);
    },
  });
  scheduler.start();
  /** The log lines with message `msg`, parsed. */
  const logged = (msg: string) =>
    lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((e) => e.msg === msg);
  return { scheduler, started, logged };
}

describe('the scheduler, on simulated time', () => {
  it('runs once at start, then on every tick of its pattern', async () => {
    const { scheduler, started } = startScheduler({
      pattern: EVERY_SECOND,
      task: async () => true,
    });
    expect(started).toEqual([0]); // before any time passes
    expect(scheduler.nextRunAt()?.getTime()).toBe(T0 + SECOND);
    await advance(3 * SECOND);
    expect(started).toEqual([0, 1000, 2000, 3000]);
    expect(scheduler.nextRunAt()?.getTime()).toBe(T0 + 4 * SECOND);
  });

  it('waits for the first tick when told not to run at start', async () => {
    const { started } = startScheduler({
      pattern: EVERY_SECOND,
      shouldRunAtStart: false,
      task: async () => true,
    });
    await advance(SECOND - 1);
    expect(started).toEqual([]);
    await advance(1);
    expect(started).toEqual([1000]);
  });

  it('never runs two cycles at once: a tick that finds one running is skipped and logged, and a failing cycle does not stop the schedule', async () => {
    let running = 0;
    let maxRunning = 0;
    const { scheduler, started, logged } = startScheduler({
      pattern: EVERY_SECOND,
      task: async () => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await sleep(1500); // longer than the 1 s tick
        running -= 1;
        if (started.length === 1) throw new Error('transient');
        return true;
      },
    });
    await advance(1500);
    // The first failure waits one interval from its start: the next tick (t=2 s) runs as usual.
    expect(scheduler.consecutiveFailures()).toBe(1);
    expect(logged('cycle failed; the next tick runs as usual')).toMatchObject([
      { level: 50, err: { code: 'internal', message: 'transient' } },
    ]);
    await advance(2700); // t = 4.2 s
    expect(started).toEqual([0, 2000, 4000]);
    expect(maxRunning).toBe(1);
    expect(scheduler.consecutiveFailures()).toBe(0); // the cycle of t=2 s succeeded at 3.5 s
    expect(logged('cycles succeed again')).toMatchObject([{ failures: 1 }]);
    // The ticks at 1 s and 3 s found a cycle running; each says when the next tick comes.
    expect(logged('previous cycle still running; tick skipped')).toMatchObject([
      { level: 40, nextRun: new Date(T0 + 2000).toISOString() },
      { level: 40, nextRun: new Date(T0 + 4000).toISOString() },
    ]);
  });

  it('backs off exponentially while cycles keep failing, and resumes the schedule after a success', async () => {
    let shouldFail = true;
    const { scheduler, started, logged } = startScheduler({
      pattern: EVERY_SECOND,
      task: async () => !shouldFail,
    });
    await advance(7600);
    // Failures at 0, 1, 3 and 7 s: waits of 1, 2 and 4 intervals, not one call a second.
    expect(started).toEqual([0, 1000, 3000, 7000]);
    expect(scheduler.consecutiveFailures()).toBe(4);
    expect(logged('backing off after failed cycles')).toMatchObject([
      { failures: 2, nextAttemptInSeconds: 2 },
      { failures: 3, nextAttemptInSeconds: 4 },
      { failures: 4, nextAttemptInSeconds: 8 },
    ]);

    shouldFail = false;
    await advance(10_000); // t = 17.6 s
    // The fourth failure waits 8 intervals (to 15 s); the success there restores every tick.
    expect(started).toEqual([0, 1000, 3000, 7000, 15_000, 16_000, 17_000]);
    expect(scheduler.consecutiveFailures()).toBe(0);
    expect(logged('cycles succeed again')).toMatchObject([{ failures: 4 }]);
  });

  it('caps the backoff at MAX_BACKOFF_MS, and a tick skipped for backoff counts as progress', async () => {
    const pollCron = '*/5 * * * *';
    const intervalMs = 5 * MINUTE;
    const deadlineMs = MINUTE;
    const { scheduler, started } = startScheduler({
      pattern: pollCron,
      deadlineMs,
      task: async () => false,
    });
    const isProgressing = createProgressCheck({
      lastProgressAt: scheduler.lastProgressAt,
      pollCron,
      cycleDeadlineMs: deadlineMs,
      now: Date.now,
    });
    const expectedGaps = [1, 2, 3, 4, 5].map((k) =>
      Math.min(MAX_BACKOFF_MS, intervalMs * 2 ** (k - 1)),
    );
    expect(expectedGaps.slice(-2)).toEqual([MAX_BACKOFF_MS, MAX_BACKOFF_MS]); // the cap is reached
    const total = expectedGaps.reduce((sum, gap) => sum + gap, 0);

    for (let at = intervalMs; at <= total; at += intervalMs) {
      await advance(intervalMs - 1);
      // However long the gap between cycles, the watchdog sees a loop at work.
      expect(isProgressing()).toBe(true);
      await advance(1);
      expect(scheduler.lastProgressAt()).toBe(T0 + at);
    }
    const gaps = started.slice(1).map((time, index) => time - started[index]!);
    expect(gaps).toEqual(expectedGaps);
    expect(scheduler.consecutiveFailures()).toBe(6);
  });

  it('logs a cycle that keeps failing the same way once a minute, not once a run', async () => {
    const { started, logged } = startScheduler({
      pattern: EVERY_SECOND,
      task: async () => {
        throw new Error('service down');
      },
    });
    await advance(63 * SECOND);
    expect(started).toEqual([0, 1, 3, 7, 15, 31, 63].map((s) => s * SECOND));
    // Logged at 0 s; the failures at 1 to 31 s fall within the minute; 63 s says how many.
    expect(logged('cycle failed; the next tick runs as usual')).toMatchObject([
      { err: { message: 'service down' } },
      { err: { message: 'service down' }, suppressed: 5 },
    ]);
  });

  it('aborts a cycle at its deadline, logs it and counts it as a failure', async () => {
    let reason: unknown;
    const { scheduler, logged } = startScheduler({
      pattern: ONCE_A_YEAR,
      deadlineMs: 200,
      task: (signal) =>
        new Promise<boolean>((_, reject) =>
          signal.addEventListener('abort', () => reject((reason = signal.reason))),
        ),
    });
    await advance(199);
    expect(reason).toBeUndefined();
    expect(scheduler.isRunning()).toBe(true);
    await advance(1);
    expect(reason).toBeInstanceOf(DOMException);
    expect((reason as DOMException).name).toBe('TimeoutError');
    expect(scheduler.isRunning()).toBe(false);
    expect(scheduler.consecutiveFailures()).toBe(1);
    expect(scheduler.lastProgressAt()).toBe(T0 + 200);
    expect(logged('cycle passed its deadline and was aborted')).toMatchObject([
      { level: 50, deadlineMs: 200 },
    ]);
  });

  it('drops the deadline of a cycle that ended in time', async () => {
    let cycleSignal: AbortSignal | undefined;
    const { scheduler } = startScheduler({
      pattern: ONCE_A_YEAR,
      deadlineMs: 200,
      task: async (signal) => {
        cycleSignal = signal;
        await sleep(50);
        return true;
      },
    });
    await advance(1000);
    expect(cycleSignal?.aborted).toBe(false);
    expect(scheduler.consecutiveFailures()).toBe(0);
    expect(vi.getTimerCount()).toBe(1); // croner's next tick, and no deadline left behind
  });

  it('stop() aborts the running cycle, resolves once it has wound down, and nothing runs after', async () => {
    let reason: unknown;
    const { scheduler, started } = startScheduler({
      pattern: EVERY_SECOND,
      task: async (signal) => {
        await new Promise((resolve) =>
          signal.addEventListener('abort', () => resolve((reason = signal.reason))),
        );
        await sleep(50); // winding down: a transaction to finish, a run to close
        throw signal.reason;
      },
    });
    await advance(500);
    let isStopped = false;
    const stopping = scheduler.stop().then(() => (isStopped = true));
    expect(reason).toBeInstanceOf(TransportError);
    expect(reason).toMatchObject({ code: 'daemon.stopping' });
    await advance(49);
    expect(isStopped).toBe(false);
    expect(scheduler.isRunning()).toBe(true);
    await advance(1);
    await stopping;
    expect(isStopped).toBe(true);
    expect(scheduler.isRunning()).toBe(false);
    expect(vi.getTimerCount()).toBe(0); // no tick and no deadline left
    await advance(10 * SECOND);
    expect(started).toEqual([0]);
  });

  it('stop() with no cycle running resolves at once', async () => {
    const { scheduler } = startScheduler({ pattern: ONCE_A_YEAR, task: async () => true });
    await advance(0); // the cycle of the start ends
    expect(scheduler.isRunning()).toBe(false);
    await scheduler.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('shows no progress while a cycle hangs past its deadline, so the watchdog withholds its ping', async () => {
    const hungCycles: ((isSuccess: boolean) => void)[] = [];
    const deadlineMs = 10 * SECOND;
    const { scheduler, logged } = startScheduler({
      pattern: EVERY_SECOND,
      deadlineMs,
      shouldRunAtStart: false,
      // A cycle that ignores its signal: only a restart ends it.
      task: () => new Promise<boolean>((resolve) => hungCycles.push(resolve)),
    });
    const isProgressing = createProgressCheck({
      lastProgressAt: scheduler.lastProgressAt,
      pollCron: EVERY_SECOND,
      cycleDeadlineMs: deadlineMs,
      now: Date.now,
    });
    try {
      expect(isProgressing()).toBe(true);
      await advance(MINUTE);
      expect(hungCycles).toHaveLength(1);
      expect(scheduler.lastProgressAt()).toBe(T0 + SECOND); // when the hung cycle began
      expect(isProgressing()).toBe(false);
      expect(logged('previous cycle still running; tick skipped')).toHaveLength(59);
    } finally {
      // Whatever failed above, end the cycles: stop() would otherwise wait on them for ever.
      for (const end of hungCycles) end(true);
    }
    await advance(0);
    expect(scheduler.lastProgressAt()).toBe(T0 + MINUTE);
    expect(isProgressing()).toBe(true);
  });

  it('reads the time from the injected clock', async () => {
    const offsetMs = 90 * MINUTE; // a clock other than Date, keeping pace with it
    const clock: Clock = { now: () => Date.now() + offsetMs, sleep: systemClock.sleep };
    let shouldFail = true;
    const { scheduler, started } = startScheduler({
      pattern: EVERY_SECOND,
      clock,
      task: async () => !shouldFail,
    });
    expect(scheduler.lastProgressAt()).toBe(T0 + offsetMs);
    await advance(3 * SECOND);
    expect(scheduler.lastProgressAt()).toBe(T0 + offsetMs + 3 * SECOND);
    // Backoff is measured on that clock too, so it is the same as on the system clock.
    shouldFail = false;
    await advance(4 * SECOND);
    expect(started).toEqual([0, 1000, 3000, 7000]);
  });
});

describe('parseCronPattern', () => {
  it('accepts a valid pattern and names the variable of an invalid one', () => {
    expect(parseCronPattern('0 * * * * *')).toBe('0 * * * * *');
    expect(() => parseCronPattern('every minute', 'TRANSPORT_X_CRON')).toThrow(
      expect.objectContaining({
        code: 'config.invalid',
        message: expect.stringContaining('TRANSPORT_X_CRON'),
      }),
    );
  });
});
