import { systemClock } from '../clock.js';
import { redactConfig, type Config } from '../config/index.js';
import { describeError } from '../errors.js';
import { checkFeedSinks } from '../feed/index.js';
import type { Logger } from '../log.js';
import { createDaemonOps } from '../ops/index.js';
import { DAEMON_SETTINGS_KEY, intakeSettingsOf } from '../ops/intake-settings.js';
import { NO_INTAKE_HINT } from '../ops/mode.js';
import type { CycleResult } from '../sync/poll.js';
import { startWebhookReceiver } from '../webhooks/index.js';
import { checkReceiverFiles } from '../webhooks/preflight.js';
import { createSyncContext, type SyncContext } from './context.js';
import { HEARTBEAT_INTERVAL_MS, startIntakeLedger, type IntakeLedger } from './intake-ledger.js';
import { startLeaderDuties, type LeaderDuties } from './leader-duties.js';
import { startLeadership } from './leadership.js';
import { createPollGate } from './poll-gate.js';
import { parseCronPattern } from './scheduler.js';

/** How long a graceful stop may take before the process is ended regardless. */
export const SHUTDOWN_DEADLINE_MS = 10_000;

/** Longest wait at start for the webhook backlog before the intake gap is judged. */
const BACKLOG_WAIT_MS = 10_000;

/** Resolves when `promise` settles or after `ms`, whichever comes first. */
async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([promise.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A running daemon. */
export interface Daemon {
  context: SyncContext;
  /** Graceful stop: no new cycle, the running one aborted at its next await, resources released. */
  stop(): Promise<void>;
  /** Resolves when the daemon has stopped. */
  stopped: Promise<void>;
}

/**
 * Starts the daemon: database open and migrated, the monitoring endpoint and the webhook
 * receiver when configured, then its part in the leadership: the leader (the only daemon on
 * SQLite; one of several on PostgreSQL) polls, applies events, drains the outbox and prunes.
 * Releasers run in reverse order of acquisition at stop. A part that cannot start stops the
 * others and throws.
 */
export async function startDaemon({
  config,
  log,
  version,
  onCycle,
  onWebhook,
  env = process.env,
}: {
  config: Config;
  log: Logger;
  version: string;
  /** Where systemd's NOTIFY_SOCKET and WATCHDOG_USEC come from. */
  env?: NodeJS.ProcessEnv;
  /** Called after each poll cycle (the demo prints it). */
  onCycle?: (result: CycleResult, context: SyncContext) => void | Promise<void>;
  /** Called with each webhook event's outcome (the demo counts them). */
  onWebhook?: (outcome: string) => void;
}): Promise<Daemon> {
  const pattern = parseCronPattern(config.pollCron);
  // Before anything starts: the files the receiver needs, read as doctor reads them.
  checkReceiverFiles(config);
  await checkFeedSinks(config, systemClock);
  log.info({ version, config: redactConfig(config) }, 'transport-sync starting');
  const ops = createDaemonOps({ config, log, env });
  const context = await createSyncContext({ config, log, hooks: ops.metrics });
  const releasers: (() => Promise<void> | void)[] = [() => context.close()];
  const { store } = context;

  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      for (const release of releasers.reverse()) {
        try {
          await release();
        } catch (error) {
          log.error({ err: describeError(error) }, 'error while stopping');
        }
      }
      log.info('transport-sync stopped');
      resolveStopped();
    })();
    return stopping;
  };

  try {
    // What status and doctor judge this daemon by, whatever the environment they run in.
    const recordedAt = store.now();
    await store.transaction((tx) =>
      tx.state.set(DAEMON_SETTINGS_KEY, JSON.stringify(intakeSettingsOf(config)), recordedAt),
    );
    const gate = await createPollGate({
      mode: config.pollMode,
      hasWebhooks: Boolean(config.webhookListen),
      store,
      clock: context.clock,
      log: log.child({ area: 'sync' }),
    });
    let duties: LeaderDuties | undefined;
    // Pushed before the receiver, so it runs after it at stop; READY=1 is sent at its start.
    releasers.push(() => ops.stop());
    const { routes, isSharedWithWebhooks } = await ops.start({
      db: context.db,
      clock: context.clock,
      // A follower polls nothing: the watchdog then checks only that it lives.
      ...(config.isPollingOn && {
        progress: { lastProgressAt: () => duties?.lastProgressAt() ?? Date.now() },
      }),
    });
    const intake: { ledger?: IntakeLedger } = {};
    const resumedAt = store.now();
    if (config.webhookListen) {
      // The ledger starts once the receiver listens; a store failure before that has no gap.
      const receiver = await startWebhookReceiver({
        config,
        store,
        log,
        ...(isSharedWithWebhooks && { fallback: routes }),
        onOutcome: (outcome) => {
          ops.metrics.recordWebhook(outcome);
          onWebhook?.(outcome);
        },
        onStoreHealth: (isStoring) =>
          isStoring ? intake.ledger?.onStored() : intake.ledger?.onStoreFailed(),
        // To this daemon's applier while it leads; a follower's deliveries are read back by
        // the leader's.
        handoff: {
          hold: (event) => duties?.handoff.hold(event),
          drop: (eventIds) => duties?.handoff.drop(eventIds),
        },
        onStored: () => duties?.wakeApplier(),
      });
      // The last heartbeat is written once the receiver has closed, after the last delivery it
      // stored: the next gap starts where intake really stopped.
      releasers.push(async () => {
        await receiver.stop();
        await intake.ledger?.stop();
      });
    } else if (!gate.isPolling()) {
      // Not refused: the outbox still drains, and polling may answer again (auto probes daily).
      // But such a daemon is not ready, and status exits 1, until a receiver is configured.
      log.error(
        { mode: 'none', hint: NO_INTAKE_HINT },
        config.isPollingOn
          ? "nothing can bring data in: the service's polling API is retired and no webhook receiver is configured"
          : 'nothing can bring data in: polling is off and no webhook receiver is configured',
      );
    }
    const leadership = await startLeadership({
      db: context.db,
      store,
      clock: context.clock,
      log,
      onLead: async () => {
        duties = startLeaderDuties({
          config,
          context,
          gate,
          metrics: ops.metrics,
          log,
          pattern,
          onCycle,
          onWebhook,
        });
      },
      onFollow: async () => {
        const leaving = duties;
        duties = undefined;
        await leaving?.stop();
      },
      onOusted: () => {
        log.error('another daemon took over this database; stopping');
        void stop();
      },
    });
    releasers.push(() => leadership.stop());
    if (config.webhookListen) {
      // Events stored before the restart are applied first (bounded, so a failing backlog
      // cannot hold the heartbeat back): a request they bring is then judged at risk too.
      await waitAtMost(duties?.applierIdle() ?? Promise.resolve(), BACKLOG_WAIT_MS);
      if (!stopping) {
        intake.ledger = await startIntakeLedger({
          store,
          clock: context.clock,
          log: log.child({ area: 'webhooks' }),
          alarmSeconds: config.intakeGapAlarmSeconds,
          resumedAt,
          // Other daemons on the database keep the heartbeat: a restart among them is no gap.
          ...(context.db.engine === 'postgres' && { minGapMs: 2 * HEARTBEAT_INTERVAL_MS }),
        });
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { context, stop, stopped };
}

/**
 * Two-stage shutdown: the first SIGTERM or SIGINT stops gracefully (the running cycle is aborted;
 * SQLite transactions are synchronous, so each either committed or never began); a second signal,
 * or the deadline, ends the process at once.
 *
 * `daemon` may still be starting: install this before `startDaemon` resolves, so that a signal
 * during start-up (migrations, the backlog of stored events, the leadership) stops the daemon as
 * soon as it is up instead of killing the process with the default action.
 */
export function handleSignals(
  daemon: Pick<Daemon, 'stop'> | Promise<Pick<Daemon, 'stop'>>,
  log: Logger,
  exit: (code: number) => void = process.exit,
): () => void {
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      log.warn({ signal }, 'second signal: exiting now');
      exit(1);
      return;
    }
    log.info({ signal }, 'stopping');
    const timer = setTimeout(() => {
      log.error({ deadlineMs: SHUTDOWN_DEADLINE_MS }, 'graceful stop took too long: exiting now');
      exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    timer.unref();
    // A daemon that failed to start has nothing to stop: its caller reports that failure.
    void Promise.resolve(daemon)
      .then((started) => started.stop())
      .catch(() => undefined)
      .finally(() => clearTimeout(timer));
  };
  // SIGHUP (systemctl reload) re-reads the webhook certificate, where there is one (see
  // webhooks/tls.ts); it must never end the daemon, as it would by default.
  const onHangup = () => log.info({ signal: 'SIGHUP' }, 'reload requested');
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', onHangup);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.off('SIGHUP', onHangup);
  };
}
