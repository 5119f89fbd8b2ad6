import type { Clock } from '../clock.js';
import type { Store } from '../db/store.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { isoFromMs } from '../time.js';

/** Key in sync_state of the last moment the receiver was known to accept and store. */
export const INTAKE_HEARTBEAT_KEY = 'intake_heartbeat_at';

/** How often the heartbeat is written: the gap measured at start is at most this much long. */
export const HEARTBEAT_INTERVAL_MS = 5_000;

/** Most request ids named in one warning; the rest are counted (status lists them all). */
const NAMED_IN_LOG = 50;

/**
 * The ledger of blind spots. The service has no replay: an event not acknowledged within its
 * three attempts (at once, ~8 s, ~64 s) is lost. So while the receiver accepts, the daemon writes
 * a heartbeat; at start, the stretch since the last one is a gap (the daemon was down), and so is
 * any stretch in which storing failed. A gap longer than the alarm threshold may have lost
 * events: it is logged at warn with the requests at risk, and status and /metrics show it until
 * an operator runs `transport-sync gaps --ack`. Shorter gaps are recorded only.
 */
export async function startIntakeLedger({
  store,
  clock,
  log,
  alarmSeconds,
  resumedAt,
  minGapMs = 0,
  intervalMs = HEARTBEAT_INTERVAL_MS,
}: {
  store: Store;
  clock: Clock;
  log: Logger;
  alarmSeconds: number;
  /**
   * When the receiver began to accept again (canonical ISO; default now). The ledger starts once
   * the events stored before that are applied, so that the requests it names at risk are judged
   * on a mirror that holds everything intake received.
   */
  resumedAt?: string;
  /** Stretches shorter than this are no gap (other daemons on a shared database kept beating). */
  minGapMs?: number;
  /** How often the heartbeat is written (default HEARTBEAT_INTERVAL_MS); tests set their pace. */
  intervalMs?: number;
}) {
  let failingSince: string | null = null;

  const record = async (startedAt: string, endedAt: string, reason: string) => {
    const seconds = (Date.parse(endedAt) - Date.parse(startedAt)) / 1000;
    if (seconds <= 0) return;
    const isAlarmed = seconds > alarmSeconds;
    const ids = await store.transaction(async (tx) => {
      const atRisk = await tx.intakeGaps.requestsAtRisk(startedAt, endedAt);
      await tx.intakeGaps.add({
        started_at: startedAt,
        ended_at: endedAt,
        seconds,
        requests_at_risk: atRisk.length,
        reason,
        is_alarmed: isAlarmed ? 1 : 0,
      });
      return atRisk;
    });
    const line = { startedAt, endedAt, seconds, reason, requestsAtRisk: ids.length };
    if (!isAlarmed) {
      log.info(line, 'intake gap recorded (within the service retries)');
      return;
    }
    log.warn(
      { ...line, requestIds: ids.slice(0, NAMED_IN_LOG), alarmSeconds },
      'intake gap longer than the service retries: events may be lost; review, then run transport-sync gaps --ack',
    );
  };

  const beat = async () => {
    const now = store.now();
    try {
      await store.transaction((tx) => tx.state.set(INTAKE_HEARTBEAT_KEY, now, now));
      if (failingSince !== null) {
        await record(failingSince, now, 'store_failed');
        failingSince = null;
      }
    } catch (error) {
      if (failingSince === null) {
        failingSince = now;
        log.error(
          { err: describeError(error) },
          'intake heartbeat not stored: the receiver cannot store',
        );
      }
    }
  };

  // The stretch since the last heartbeat of the previous run, if there was one.
  const last = await store.read((tx) => tx.state.get(INTAKE_HEARTBEAT_KEY));
  const now = resumedAt ?? store.now();
  if (last && Date.parse(now) - Date.parse(last) > minGapMs) {
    try {
      await record(last, now, 'daemon_down');
    } catch (error) {
      log.error({ err: describeError(error) }, 'intake gap not recorded');
    }
  }
  await beat();
  const timer = setInterval(() => void beat(), intervalMs);
  timer.unref();

  return {
    /** A delivery could not be stored: the gap starts now, unless it already has. */
    onStoreFailed(): void {
      failingSince ??= isoFromMs(clock.now());
    },
    /** A delivery was stored: a gap in progress ends now. */
    onStored(): void {
      if (failingSince !== null) void beat();
    },
    /** The last heartbeat, written at a clean stop so that the next gap is measured exactly. */
    async stop(): Promise<void> {
      clearInterval(timer);
      await beat();
    },
  };
}

/** The ledger's interface. */
export type IntakeLedger = Awaited<ReturnType<typeof startIntakeLedger>>;
