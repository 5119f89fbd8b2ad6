import type { Config } from '../config/index.js';
import { describeError } from '../errors.js';
import { feedSinkNames, startFeedPublishers } from '../feed/index.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../ops/metrics.js';
import { startDailyPrune } from '../ops/retention.js';
import { startOutboxDrainer } from '../outbox/index.js';
import { runPollCycle, type CycleResult } from '../sync/poll.js';
import { isoFromMs } from '../time.js';
import { startEventApplier, type EventApplier, type PayloadHandoff } from '../webhooks/index.js';
import type { SyncContext } from './context.js';
import type { PollGate } from './poll-gate.js';
import { createScheduler } from './scheduler.js';

/** How often the leader looks for events other daemons stored (a shared PostgreSQL database). */
const SHARED_EVENTS_POLL_MS = 1_000;

/** The leader's work, running. */
export interface LeaderDuties {
  /** The scheduler's last progress (epoch ms on the daemon's clock), or now when nothing is scheduled. */
  lastProgressAt(): number;
  /** A delivery was stored here: apply it now. */
  wakeApplier(): void;
  /**
   * Hands the applier a delivery's body as parsed at intake, before its commit, or lets go of
   * it when the commit failed (handoff.ts); nothing when no applier runs here.
   */
  handoff: PayloadHandoff;
  /** Resolves once the stored events are applied (at once without a receiver). */
  applierIdle(): Promise<void>;
  /** Stops all of it, in reverse order of start; resolves once stopped. */
  stop(): Promise<void>;
}

/**
 * What exactly one daemon at a time does: publishing the change feed to its sinks, the poll on
 * its cron pattern (where polling is on), applying stored webhook events, draining the outbox,
 * and the daily prune. Started when this daemon becomes the leader, stopped when it stops being
 * one.
 */
export function startLeaderDuties({
  config,
  context,
  gate,
  metrics,
  log,
  pattern,
  onCycle,
  onWebhook,
}: {
  config: Config;
  context: SyncContext;
  gate: PollGate;
  metrics: Metrics;
  log: Logger;
  pattern: string;
  onCycle?: (result: CycleResult, context: SyncContext) => void | Promise<void>;
  onWebhook?: (outcome: string) => void;
}): LeaderDuties {
  const { store, clock } = context;
  const stops: (() => Promise<void> | void)[] = [];

  // Runs left 'running' by a killed process (a daemon, or a one-shot sync) are closed once they
  // are older than any live cycle can be.
  const closeAbandonedRuns = async () => {
    const before = isoFromMs(clock.now() - config.cycleDeadlineMs);
    const closed = await store.transaction((tx) => tx.runs.closeAbandoned(before, tx.now()));
    if (closed > 0) log.warn({ runs: closed }, 'closed runs left running by a killed process');
  };
  // The feed's sinks first: a change the first cycle commits is theirs to deliver.
  const publishers = startFeedPublishers({
    config,
    db: context.db,
    store,
    clock,
    log: log.child({ area: 'feed' }),
  });
  stops.push(() => publishers.stop());
  const scheduler = createScheduler({
    pattern,
    deadlineMs: config.cycleDeadlineMs,
    log: log.child({ area: 'scheduler' }),
    clock,
    task: async (signal) => {
      // Retired polling API: no cycle but the daily probe; the loop still counts as progressing.
      if (!gate.shouldPoll()) return true;
      await closeAbandonedRuns();
      const startedAt = clock.now();
      const result = await runPollCycle(context.pollDeps, signal);
      await gate.observe(result);
      metrics.observeCycle(result, clock.now() - startedAt);
      await onCycle?.(result, context);
      return result.isListComplete || result.isPollingRetired;
    },
  });
  if (config.isPollingOn) {
    scheduler.start();
    stops.push(() => scheduler.stop());
    log.info({ pattern, nextRunAt: scheduler.nextRunAt()?.toISOString() }, 'polling scheduled');
  } else {
    log.warn('polling is off (TRANSPORT_POLL=off)');
  }
  // Provider actions and GPS samples queued in the outbox tables go out whether or not we poll.
  const drainer = startOutboxDrainer({
    store,
    client: context.client,
    log,
    clock,
    intervalMs: config.outboxIntervalMs,
  });
  stops.push(() => drainer.stop());
  let applier: EventApplier | undefined;
  if (config.webhookListen) {
    applier = startEventApplier({
      config,
      store,
      client: context.client,
      log,
      clock,
      pollingIsOn: gate.isPolling(),
      onOutcome: (outcome) => {
        metrics.recordWebhook(outcome);
        onWebhook?.(outcome);
      },
      ...(context.db.engine === 'postgres' && { pollMs: SHARED_EVENTS_POLL_MS }),
    });
    stops.push(() => applier?.stop());
  }
  stops.push(
    startDailyPrune({
      db: context.db,
      retentionDays: config.retentionDays,
      feedSinks: feedSinkNames(config),
      log: log.child({ area: 'retention' }),
    }),
  );

  let stopping: Promise<void> | undefined;
  return {
    lastProgressAt: () => (config.isPollingOn ? scheduler.lastProgressAt() : clock.now()),
    wakeApplier: () => applier?.wake(),
    handoff: {
      hold: (event) => applier?.hold(event),
      drop: (eventIds) => applier?.drop(eventIds),
    },
    applierIdle: () => applier?.idle() ?? Promise.resolve(),
    stop() {
      stopping ??= (async () => {
        for (const stop of stops.reverse()) {
          try {
            await stop();
          } catch (error) {
            log.error({ err: describeError(error) }, 'error while stopping');
          }
        }
      })();
      return stopping;
    },
  };
}
