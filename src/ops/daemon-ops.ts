import type { Clock } from '../clock.js';
import type { Config } from '../config/index.js';
import type { MirrorDb } from '../db/open.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { createReadiness } from './freshness.js';
import {
  createOpsHandler,
  parseListen,
  startOpsServer,
  type FallbackHandler,
  type OpsRoutesHandler,
  type OpsServer,
} from './http-server.js';
import { createMetrics, type Metrics } from './metrics.js';
import { feedSinkNames } from '../feed/sink-names.js';
import { registerDbGauges } from './metrics-db.js';
import { createSystemdNotifier, type SystemdNotifier } from './notify.js';
import { createProgressCheck, startWatchdog } from './watchdog.js';

/** What the watchdog watches: the poll scheduler's progress. */
export interface ProgressSource {
  lastProgressAt(): number;
}

/** What the daemon gets from ops: metrics to feed, then `start` and `stop`. */
export interface DaemonOps {
  /** Pass as the client's hooks (onCall, onRetry, onRateLimitedMs) and call observeCycle. */
  metrics: Metrics;
  notifier: SystemdNotifier;
  /**
   * Once the database is open and migrated: the database gauges, the monitoring endpoint (when
   * TRANSPORT_HTTP_LISTEN is set), the watchdog, and finally READY=1. Resolves to the endpoint's URL, if it listens; rejects when it cannot.
   * When TRANSPORT_HTTP_LISTEN equals TRANSPORT_WEBHOOK_LISTEN it does not listen: the webhook
   * receiver must serve `routes` in front of its own (they answer false for other paths).
   */
  start(deps: {
    db: MirrorDb;
    clock: Clock;
    /** The poll's progress; undefined with polling off (the watchdog then checks liveness only). */
    progress?: ProgressSource;
    /** Requests for other paths on the monitoring port (a shared webhook receiver). */
    extraHandler?: FallbackHandler;
  }): Promise<{ url?: string; routes: OpsRoutesHandler; isSharedWithWebhooks: boolean }>;
  /** STOPPING=1 first, then everything `start` began, in reverse. */
  stop(): Promise<void>;
}

/**
 * Everything operations adds to `run`, behind two calls, so the daemon's lifecycle stays about
 * the daemon. Create it before the sync context (the client needs the metric hooks).
 */
export function createDaemonOps({
  config,
  log,
  env,
}: {
  config: Config;
  log: Logger;
  env: NodeJS.ProcessEnv;
}): DaemonOps {
  const metrics = createMetrics();
  const notifier = createSystemdNotifier({ env, log });
  const olog = log.child({ area: 'ops' });
  const releasers: (() => Promise<void> | void)[] = [];

  return {
    metrics,
    notifier,
    async start({ db, clock, progress, extraHandler }) {
      let url: string | undefined;
      registerDbGauges({
        registry: metrics.registry,
        db,
        now: clock.now,
        pollMode: config.pollMode,
        hasWebhooks: Boolean(config.webhookListen),
        silence: { minutes: config.webhookSilenceMinutes, hours: config.webhookSilenceHours },
        feedSinks: feedSinkNames(config),
      });
      const readiness = createReadiness({
        db,
        now: clock.now,
        pollCron: config.pollCron,
        staleAfterCycles: config.staleAfterCycles,
        isPollingOn: config.isPollingOn,
        hasWebhooks: Boolean(config.webhookListen),
      });
      const routes = createOpsHandler({ metrics, readiness, log: olog });
      const isSharedWithWebhooks = isSameAddress(config.httpListen, config.webhookListen);
      if (config.httpListen && !isSharedWithWebhooks) {
        const server: OpsServer = await startOpsServer({
          listen: config.httpListen,
          metrics,
          readiness,
          log: olog,
          ...(extraHandler && { extraHandler }),
        });
        releasers.push(() => server.stop());
        url = server.url;
      } else if (isSharedWithWebhooks) {
        olog.info('monitoring routes are served by the webhook receiver (same address)');
      }
      // The scheduler reads its progress from the daemon's clock; the check judges it on the same.
      const isProgressing = progress
        ? createProgressCheck({
            now: clock.now,
            lastProgressAt: () => progress.lastProgressAt(),
            pollCron: config.pollCron,
            cycleDeadlineMs: config.cycleDeadlineMs,
          })
        : () => true;
      releasers.push(startWatchdog({ notifier, isProgressing, log }));
      await notifier.ready(
        config.isPollingOn ? `polling on "${config.pollCron}"` : 'webhooks only, polling off',
      );
      return { ...(url && { url }), routes, isSharedWithWebhooks };
    },
    async stop() {
      // Not awaited: telling systemd must never hold up the stop itself.
      void notifier.stopping();
      for (const release of releasers.splice(0).reverse()) {
        try {
          await release();
        } catch (error) {
          olog.error({ err: describeError(error) }, 'error while stopping');
        }
      }
    },
  };
}

/** Two listen settings naming one address (`9464` and `127.0.0.1:9464` do). */
function isSameAddress(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const [x, y] = [parseListen(a), parseListen(b)];
  return x.host === y.host && x.port === y.port;
}
