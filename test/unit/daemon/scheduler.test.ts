import { afterEach, describe, expect, it } from 'vitest';
import { createScheduler } from '../../../src/daemon/scheduler.js';
import { silentLogger } from '../../../src/log.js';

let stop: (() => Promise<void>) | undefined;
afterEach(async () => stop?.());

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the scheduler', () => {
  it('never runs two cycles at once, and a failing cycle does not stop the schedule', async () => {
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const scheduler = createScheduler({
      pattern: '* * * * * *',
      deadlineMs: 10_000,
      log: silentLogger(),
      task: async () => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        runs += 1;
        await wait(1_500); // longer than the 1 s tick
        running -= 1;
        if (runs === 1) throw new Error('transient');
        return true;
      },
    });
    stop = () => scheduler.stop();
    scheduler.start();
    await wait(4_200);
    expect(maxRunning).toBe(1);
    expect(runs).toBeGreaterThanOrEqual(2);
  });

  it('backs off exponentially while cycles keep failing, and resumes the schedule after a success', async () => {
    const startedAt: number[] = [];
    let shouldFail = true;
    const scheduler = createScheduler({
      pattern: '* * * * * *',
      deadlineMs: 10_000,
      log: silentLogger(),
      task: async () => {
        startedAt.push(Date.now());
        return !shouldFail;
      },
    });
    stop = () => scheduler.stop();
    scheduler.start();
    await wait(7_600);
    // Failures at t=0, ~1 s, ~3 s, ~7 s: waits of 1, 2, 4 intervals, not one call a second.
    expect(startedAt.length).toBeGreaterThanOrEqual(3);
    expect(startedAt.length).toBeLessThanOrEqual(5);
    expect(scheduler.consecutiveFailures()).toBeGreaterThanOrEqual(3);
    const gaps = startedAt.slice(1).map((time, index) => time - startedAt[index]!);
    expect(gaps.at(-1)!).toBeGreaterThan(gaps[0]! * 1.5);
    shouldFail = false;
  }, 15_000);

  it('aborts a cycle at its deadline', async () => {
    let reason: unknown;
    const scheduler = createScheduler({
      pattern: '0 0 1 1 *',
      deadlineMs: 200,
      log: silentLogger(),
      task: (signal) =>
        new Promise<boolean>((_, reject) =>
          signal.addEventListener('abort', () => reject((reason = signal.reason))),
        ),
    });
    stop = () => scheduler.stop();
    scheduler.start();
    await wait(400);
    expect(reason).toBeInstanceOf(DOMException);
    expect(scheduler.isRunning()).toBe(false);
  });
});
