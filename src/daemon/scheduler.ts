import { Cron } from 'croner';
import { TransportError, describeError } from '../errors.js';
import type { Logger } from '../log.js';

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

interface SchedulerOptions {
  pattern: string;
  /** One unit of work, e.g. a poll cycle. Receives a signal that aborts at the deadline or at stop. */
  task: (signal: AbortSignal) => Promise<void>;
  deadlineMs: number;
  log: Logger;
  /** Run once at start instead of waiting for the first tick: a restarted daemon catches up at once. */
  shouldRunAtStart?: boolean;
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
}: SchedulerOptions) {
  let current: Promise<void> | undefined;
  let controller: AbortController | undefined;
  let isStopped = false;
  let lastProgressAt = Date.now();
  let job: Cron | undefined;

  const tick = () => {
    if (isStopped) return;
    lastProgressAt = Date.now();
    if (current) {
      log.warn(
        { nextRun: job?.nextRun()?.toISOString() },
        'previous cycle still running; tick skipped',
      );
      return;
    }
    controller = new AbortController();
    const deadline = AbortSignal.timeout(deadlineMs);
    const signal = AbortSignal.any([controller.signal, deadline]);
    current = task(signal)
      .catch((error: unknown) => {
        if (deadline.aborted)
          log.error({ deadlineMs }, 'cycle passed its deadline and was aborted');
        else log.error({ err: describeError(error) }, 'cycle failed; the next tick runs as usual');
      })
      .finally(() => {
        current = undefined;
        controller = undefined;
        lastProgressAt = Date.now();
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
    nextRunAt: () => job?.nextRun() ?? null,
    /** When the loop last started or finished a cycle (for the watchdog). */
    lastProgressAt: () => lastProgressAt,
  };
}

/** The scheduler's interface. */
export type Scheduler = ReturnType<typeof createScheduler>;
