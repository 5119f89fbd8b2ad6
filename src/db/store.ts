import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { isoFromMs } from '../time.js';
import { databaseError } from './errors.js';
import type { MirrorDb } from './open.js';
import { createCheckpointStore } from './checkpoint-store.js';
import { createDriftStore } from './drift-store.js';
import { createIntakeGapStore } from './intake-gap-store.js';
import { createQuarantineStore } from './quarantine-store.js';
import { createRequestStore } from './request-store.js';
import { createRunStore } from './run-store.js';
import { createSyncStateStore } from './sync-state-store.js';

/**
 * The one store every path writes through (poll, backfill, webhooks, actions), so guards and the
 * change log apply alike. Write transactions are BEGIN IMMEDIATE: they take the write lock at
 * the start, so two writers wait on busy_timeout instead of failing mid-transaction.
 */
export function createStore({ db, clock, log }: { db: MirrorDb; clock: Clock; log?: Logger }) {
  const requests = createRequestStore(db.sqlite);
  // Each drift is logged once, when first recorded: the member and the request, never a value.
  const driftLog = log?.child({ area: 'schema' });
  return {
    db,
    requests,
    runs: createRunStore(db.sqlite),
    state: createSyncStateStore(db.sqlite),
    quarantine: createQuarantineStore(db.sqlite),
    checkpoints: createCheckpointStore(db.sqlite),
    intakeGaps: createIntakeGapStore(db.sqlite),
    drift: createDriftStore(db.sqlite, {
      onNew: (d) =>
        driftLog?.warn(
          {
            requestId: d.requestId,
            source: d.source,
            member: d.member,
            problem: d.problem,
            expected: d.expected,
            received: d.received,
          },
          'schema drift: a member differs from the documented shape',
        ),
    }),
    /** Now, in canonical form. */
    now: () => isoFromMs(clock.now()),
    /** Runs `work` in one BEGIN IMMEDIATE transaction; a throw rolls it all back. */
    transaction<T>(work: () => T): T {
      try {
        return db.sqlite.transaction(work).immediate();
      } catch (error) {
        throw databaseError(error, db.path);
      }
    },
  };
}

/** The store's interface. */
export type Store = ReturnType<typeof createStore>;
