import {
  createServiceClient,
  type ServiceClient,
  type ServiceClientOptions,
} from '../api/index.js';
import { systemClock, type Clock } from '../clock.js';
import type { Config } from '../config/index.js';
import { openDatabase, targetOf, type MirrorDb } from '../db/open.js';
import type { CheckpointStatus } from '../db/sqlite/checkpointer.js';
import { createStore, type Store } from '../db/store.js';
import { createRateLimitedLogger, type Logger } from '../log.js';
import { createCallTally, type CallTally } from '../sync/call-tally.js';
import type { PollDeps } from '../sync/poll.js';

/** Requests per list call before a state's window is split (see planChunks). */
export const LIST_CHUNK_REQUESTS = 20_000;

/** Everything a command that syncs needs, built once from the configuration. */
export interface SyncContext {
  config: Config;
  db: MirrorDb;
  store: Store;
  client: ServiceClient;
  calls: CallTally;
  clock: Clock;
  log: Logger;
  pollDeps: PollDeps;
  close(): Promise<void>;
}

/**
 * Opens the database (migrating it), builds the service client and wires the call tally into it.
 * The order matters: a database that cannot be opened or is too new stops us before any call.
 */
export async function createSyncContext({
  config,
  log,
  clock = systemClock,
  hooks = {},
  maxConnections,
}: {
  config: Config;
  log: Logger;
  clock?: Clock;
  /** The client's metric hooks (ops/metrics); the call tally is always fed. */
  hooks?: Pick<ServiceClientOptions, 'onCall' | 'onRetry' | 'onRateLimitedMs'>;
  /** PostgreSQL connections at once; a one-shot command passes ONE_SHOT_CONNECTIONS. */
  maxConnections?: number;
}): Promise<SyncContext> {
  const db = await openDatabase({ ...targetOf(config), maxConnections });
  if (db.engine === 'sqlite' && db.checkpoints) warnOfCheckpointFailures(db.checkpoints, log);
  const store = createStore({ db, clock, log });
  const calls = createCallTally();
  const client = createServiceClient({
    authUrl: config.authUrl,
    hubUrl: config.hubUrl,
    baseUrl: config.baseUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    clock,
    log,
    concurrency: config.concurrency,
    rateLimitPerSec: config.rateLimitPerSec,
    timeouts: { attemptMs: config.httpTimeoutMs },
    schemaPolicy: config.schemaPolicy,
    locationsApi: config.locationsApi,
    onCall: (event) => {
      calls.record(event);
      hooks.onCall?.(event);
    },
    onRetry: hooks.onRetry,
    onRateLimitedMs: hooks.onRateLimitedMs,
  });
  const syncLog = log.child({ area: 'sync' });
  const pollDeps: PollDeps = {
    client,
    store,
    clock,
    log: syncLog,
    repeatedWarnings: createRateLimitedLogger(syncLog),
    calls,
    settings: {
      windowPastHours: config.windowPastHours,
      windowFutureHours: config.windowFutureHours,
      states: config.states,
      concurrency: config.concurrency,
      listChunkRequests: LIST_CHUNK_REQUESTS,
    },
  };
  return {
    config,
    db,
    store,
    client,
    calls,
    clock,
    log,
    pollDeps,
    async close() {
      await client.close();
      await db.close();
    },
  };
}

/**
 * Logs the failures of a SQLite mirror's WAL checkpoint thread (src/db/sqlite/checkpointer.ts).
 * Neither loses data nor stops the daemon: the writer's own checkpoints take over. The thread's
 * stop is told once; a checkpoint that fails is told once a minute, as it may fail at each commit.
 */
export function warnOfCheckpointFailures(checkpoints: CheckpointStatus, log: Logger): void {
  const dbLog = log.child({ area: 'db' });
  const repeated = createRateLimitedLogger(dbLog);
  checkpoints.onFailure((error) => {
    // SQLite's own code (SQLITE_IOERR...) says more than 'internal'.
    const { code } = error as { code?: unknown };
    const err = { code: typeof code === 'string' ? code : 'internal', message: error.message };
    if (checkpoints.hasStopped) {
      dbLog.warn(
        { err },
        "the WAL's checkpoint thread stopped; the writer checkpoints from now on",
      );
    } else
      repeated.warn({ err }, 'a WAL checkpoint failed; the next commit asks again', 'checkpoint');
  });
}
