import { Cron } from 'croner';
import { systemClock, type Clock } from '../clock.js';
import { TransportError, describeError } from '../errors.js';
import { createRateLimitedLogger, type Logger } from '../log.js';

/** Validates a cron pattern, or throws a config error naming the variable. */
export function parseCronPattern(pattern: string, env = 'TRANSPORT_POLL_CRON'): string {
  try {
    new Cron(pattern, { paused: true }).stop();
    return pattern;
  } catch (error) {
    throw new TransportError({
      code: 'config.invalid',
      message: `invalid configuration: ${env} is not a valid cron pattern (got "${pattern}"): ${(error as Error).message}`,
      hint: 'Use five or six fields, seconds first when six, e.g. "0 * * * * *" for every minute.',
    });
  }
}

/** Longest pause between attempts while cycles keep failing. */
export const MAX_BACKOFF_MS = 30 * 60_000;

interface SchedulerOptions {
  pattern: string;
  /**
   * One unit of work, e.g. a poll cycle. Receives a signal that aborts at the deadline or at stop.
   * Resolves false (or throws) when it failed, which backs the schedule off.
   */
  task: (signal: AbortSignal) => Promise<boolean>;
  deadlineMs: number;
  log: Logger;
  /** Run once at start instead of waiting for the first tick: a restarted daemon catches up at once. */
  shouldRunAtStart?: boolean;
  /**
   * Where the scheduler reads the time and waits out each deadline. Croner's ticks follow the
   * process's Date and timers, so this clock must keep to them (the system clock does).
   */
  clock?: Clock;
}

/**
 * Runs the task on a cron schedule, never two at once: a tick that finds the previous run still
 * going is skipped and logged. Each run gets a deadline. A failing run is logged and the next tick
 * runs as usual; the daemon never exits on a transient error.
 */
export function createScheduler({
  pattern,
  task,
  deadlineMs,
  log,
  shouldRunAtStart = true,
  clock = systemClock,
}: SchedulerOptions) {
  let current: Promise<void> | undefined;
  let controller: AbortController | undefined;
  let isStopped = false;
  let lastProgressAt = clock.now();
  let job: Cron | undefined;
  let failures = 0;
  let resumeAt = 0;
  let cycleStartedAt = 0;
  // During an outage every cycle fails the same way: say so once a minute, not once a tick.
  const repeatedErrors = createRateLimitedLogger(log, { now: clock.now });

  // A service that keeps failing is asked less and less often: after k failed cycles in a row the
  // next waits about interval * 2^(k-1), capped, so a months-long outage costs a trickle of calls.
  const recordOutcome = (isSuccess: boolean) => {
    if (isSuccess) {
      if (failures > 0) log.info({ failures }, 'cycles succeed again');
      failures = 0;
      resumeAt = 0;
      return;
    }
    failures += 1;
    const waitMs = Math.min(MAX_BACKOFF_MS, intervalMs(job) * 2 ** (failures - 1));
    // Measured from the failed cycle's start (ticks are), with slack for timer jitter.
    resumeAt = cycleStartedAt + waitMs - 500;
    if (failures > 1)
      log.warn(
        { failures, nextAttemptInSeconds: Math.round(waitMs / 1000) },
        'backing off after failed cycles',
      );
  };

  // lastProgressAt feeds the systemd watchdog: a tick skipped for backoff is the loop working as
  // meant, a tick skipped because a cycle hangs past its deadline is not.
  const tick = () => {
    if (isStopped) return;
    const now = clock.now();
    if (now < resumeAt) {
      lastProgressAt = now;
      return;
    }
    if (current) {
      log.warn(
        { nextRun: job?.nextRun()?.toISOString() },
        'previous cycle still running; tick skipped',
      );
      return;
    }
    cycleStartedAt = now;
    lastProgressAt = now;
    controller = new AbortController();
    const deadline = startDeadline(clock, deadlineMs);
    const signal = AbortSignal.any([controller.signal, deadline.signal]);
    current = task(signal)
      .then(recordOutcome)
      .catch((error: unknown) => {
        if (deadline.signal.aborted)
          log.error({ deadlineMs }, 'cycle passed its deadline and was aborted');
        else
          repeatedErrors.error(
            { err: describeError(error) },
            'cycle failed; the next tick runs as usual',
          );
        recordOutcome(false);
      })
      .finally(() => {
        deadline.cancel();
        current = undefined;
        controller = undefined;
        lastProgressAt = clock.now();
      });
  };

  return {
    start(): void {
      job = new Cron(pattern, { protect: false }, tick);
      if (shouldRunAtStart) tick();
    },
    /** Stops scheduling and aborts the running cycle; resolves when it has wound down. */
    async stop(): Promise<void> {
      isStopped = true;
      job?.stop();
      controller?.abort(new TransportError({ code: 'daemon.stopping', message: 'shutting down' }));
      await current;
    },
    /** Resolves when the running cycle (if any) ends. */
    async idle(): Promise<void> {
      await current;
    },
    isRunning: () => current !== undefined,
    /** Failed cycles in a row (0 after a success). */
    consecutiveFailures: () => failures,
    nextRunAt: () => job?.nextRun() ?? null,
    /** When the loop last started or finished a cycle (for the watchdog). */
    lastProgressAt: () => lastProgressAt,
  };
}

/**
 * A signal that aborts `ms` from now on `clock` with the TimeoutError AbortSignal.timeout would
 * give, and `cancel` to drop the wait once the cycle ends (so no timer outlives its cycle).
 */
function startDeadline(clock: Clock, ms: number) {
  const deadline = new AbortController();
  const waiting = new AbortController();
  clock.sleep(ms, waiting.signal).then(
    () => deadline.abort(new DOMException('the cycle passed its deadline', 'TimeoutError')),
    () => undefined, // cancelled: the cycle ended in time
  );
  return { signal: deadline.signal, cancel: () => waiting.abort() };
}

/** The gap between the schedule's next two runs (one minute when it cannot tell). */
function intervalMs(job: Cron | undefined): number {
  const [first, second] = job?.nextRuns(2) ?? [];
  return first && second ? second.getTime() - first.getTime() : 60_000;
}

/** The scheduler's interface. */
export type Scheduler = ReturnType<typeof createScheduler>;
