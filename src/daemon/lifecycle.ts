import { redactConfig, type Config } from '../config/index.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { createDaemonOps } from '../ops/index.js';
import { isoFromMs } from '../time.js';
import { runPollCycle, type CycleResult } from '../sync/poll.js';
import { createSyncContext, type SyncContext } from './context.js';
import { acquireOwnerLease } from './owner-lease.js';
import { startOutboxDrainer } from '../outbox/index.js';
import { startWebhookService } from '../webhooks/index.js';
import { startIntakeLedger, type IntakeLedger } from './intake-ledger.js';
import { createPollGate } from './poll-gate.js';
import { createScheduler, parseCronPattern } from './scheduler.js';

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
 * Starts the daemon: database open and migrated, the scheduler polling on its cron pattern, the
 * outbox drainer, the monitoring endpoint and the webhook receiver when configured. Releasers run
 * in reverse order of acquisition at stop. A part that cannot start stops the others and throws.
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
  log.info({ version, config: redactConfig(config) }, 'transport-sync starting');
  const ops = createDaemonOps({ config, log, env });
  const context = await createSyncContext({ config, log, hooks: ops.metrics });
  const releasers: (() => Promise<void> | void)[] = [() => context.close()];
  try {
    const lease = await acquireOwnerLease({
      store: context.store,
      clock: context.clock,
      log,
      onLost: () => {
        log.error('another daemon took over this database; stopping');
        void stop();
      },
    });
    releasers.push(() => lease.release());
  } catch (error) {
    await context.close();
    throw error;
  }

  const { store } = context;
  // Runs left 'running' by a killed process (a daemon, or a one-shot sync) are closed once they
  // are older than any live cycle can be.
  const closeAbandonedRuns = async () => {
    const before = isoFromMs(context.clock.now() - config.cycleDeadlineMs);
    const closed = await store.transaction((tx) => tx.runs.closeAbandoned(before, tx.now()));
    if (closed > 0) log.warn({ runs: closed }, 'closed runs left running by a killed process');
  };

  const gate = await createPollGate({
    mode: config.pollMode,
    store,
    clock: context.clock,
    log: log.child({ area: 'sync' }),
  });
  const scheduler = createScheduler({
    pattern,
    deadlineMs: config.cycleDeadlineMs,
    log: log.child({ area: 'scheduler' }),
    task: async (signal) => {
      // Retired polling API: no cycle but the daily probe; the loop still counts as progressing.
      if (!gate.shouldPoll()) return true;
      await closeAbandonedRuns();
      const startedAt = Date.now();
      const result = await runPollCycle(context.pollDeps, signal);
      await gate.observe(result);
      ops.metrics.observeCycle(result, Date.now() - startedAt);
      await onCycle?.(result, context);
      return result.isListComplete || result.isPollingRetired;
    },
  });
  if (config.isPollingOn) {
    scheduler.start();
    releasers.push(() => scheduler.stop());
    log.info({ pattern, nextRunAt: scheduler.nextRunAt()?.toISOString() }, 'polling scheduled');
  } else {
    log.warn('polling is off (TRANSPORT_POLL=off)');
  }
  // Provider actions and GPS samples queued in the outbox tables go out whether or not we poll.
  const drainer = startOutboxDrainer({
    store,
    client: context.client,
    log,
    clock: context.clock,
    intervalMs: config.outboxIntervalMs,
  });
  releasers.push(() => drainer.stop());

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
    // Pushed before the receiver, so it runs after it at stop; READY=1 is sent at its start.
    releasers.push(() => ops.stop());
    const { routes, isSharedWithWebhooks } = await ops.start({
      db: context.db,
      clock: context.clock,
      ...(config.isPollingOn && { scheduler }),
    });
    if (config.webhookListen) {
      // The ledger starts once the receiver listens; a store failure before that has no gap.
      const intake: { ledger?: IntakeLedger } = {};
      const resumedAt = store.now();
      const webhooks = await startWebhookService({
        config,
        store,
        client: context.client,
        log,
        clock: context.clock,
        pollingIsOn: gate.isPolling(),
        ...(isSharedWithWebhooks && { fallback: routes }),
        onOutcome: (outcome) => {
          ops.metrics.recordWebhook(outcome);
          onWebhook?.(outcome);
        },
        onStoreHealth: (isStoring) =>
          isStoring ? intake.ledger?.onStored() : intake.ledger?.onStoreFailed(),
      });
      // The last heartbeat is written once the receiver has closed, after the last delivery it
      // stored: the next gap starts where intake really stopped.
      releasers.push(async () => {
        await webhooks.stop();
        await intake.ledger?.stop();
      });
      // Events stored before the restart are applied first (bounded, so a failing backlog
      // cannot hold the heartbeat back): a request they bring is then judged at risk too.
      await waitAtMost(webhooks.idle(), BACKLOG_WAIT_MS);
      if (!stopping) {
        intake.ledger = await startIntakeLedger({
          store,
          clock: context.clock,
          log: log.child({ area: 'webhooks' }),
          alarmSeconds: config.intakeGapAlarmSeconds,
          resumedAt,
        });
      }
    } else if (!config.isPollingOn) {
      log.warn('neither polling nor webhooks: only the outbox is served');
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
 */
export function handleSignals(
  daemon: Daemon,
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
    void daemon.stop().finally(() => clearTimeout(timer));
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
