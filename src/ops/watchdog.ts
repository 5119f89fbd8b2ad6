import type { Logger } from '../log.js';
import { createRateLimitedLogger } from '../log.js';
import { nthRunAfter, pollIntervalMs } from './freshness.js';
import type { SystemdNotifier } from './notify.js';

/** Extra slack on top of interval + deadline before the loop counts as hung. */
const PROGRESS_GRACE_MS = 30_000;

/**
 * True while the scheduler loop shows progress: its last tick or cycle end is no older than the
 * wait for the next scheduled tick (at least one poll interval) plus the cycle deadline (plus a
 * grace). A loop that stopped ticking, or a cycle
 * stuck past its deadline, fails this, so the watchdog ping is withheld and systemd restarts us.
 */
export function createProgressCheck({
  lastProgressAt,
  pollCron,
  cycleDeadlineMs,
  now = Date.now,
}: {
  /** The scheduler's lastProgressAt (epoch ms, on the clock `now` reads). */
  lastProgressAt: () => number;
  pollCron: string;
  cycleDeadlineMs: number;
  now?: () => number;
}): () => boolean {
  return () => {
    const at = now();
    const progressAt = lastProgressAt();
    // Until the next scheduled tick after the last progress, however far off (a schedule that
    // pauses overnight ticks no more until morning), and at least one current interval.
    const quietMs = Math.max(
      pollIntervalMs(pollCron, at),
      nthRunAfter(pollCron, progressAt, 1) - progressAt,
    );
    return at - progressAt <= quietMs + cycleDeadlineMs + PROGRESS_GRACE_MS;
  };
}

/**
 * Sends WATCHDOG=1 every `notifier.watchdogIntervalMs` while `isProgressing()` holds. With the
 * watchdog off (no WatchdogSec) it does nothing. Returns a stop function.
 */
export function startWatchdog({
  notifier,
  isProgressing,
  log,
}: {
  notifier: SystemdNotifier;
  isProgressing: () => boolean;
  log: Logger;
}): () => void {
  const intervalMs = notifier.watchdogIntervalMs;
  if (intervalMs === null) return () => undefined;
  const limited = createRateLimitedLogger(log.child({ area: 'systemd' }), { intervalMs: 60_000 });
  const timer = setInterval(() => {
    if (isProgressing()) void notifier.watchdog();
    else limited.error({}, 'scheduler made no progress; watchdog ping withheld');
  }, intervalMs);
  // The daemon lives on its server and scheduler; the watchdog alone must not keep it running.
  timer.unref();
  log.info({ intervalMs }, 'systemd watchdog on');
  return () => clearInterval(timer);
}
