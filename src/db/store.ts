import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { isoFromMs } from '../time.js';
import { retryWriteConflicts } from './conflicts.js';
import type { Connection, ReadOptions, Sql } from './sql.js';
import { createChangeLog, type ChangeLog } from './store/change-log.js';
import { createCheckpointStore } from './store/checkpoint-store.js';
import { createDriftStore, type NewDrift } from './store/drift-store.js';
import { createEventStore } from './store/event-store.js';
import { createFeedCursorStore } from './store/feed-cursor-store.js';
import { createIntakeGapStore } from './store/intake-gap-store.js';
import { createOutboxStore } from './store/outbox-store.js';
import { createQuarantineStore } from './store/quarantine-store.js';
import { createRequestStore } from './store/request-store.js';
import { createRunStore } from './store/run-store.js';
import { createSyncStateStore } from './store/sync-state-store.js';
import { createSharedWrittenCache, type TransactionCache } from './store/written-cache.js';

/** Every table's statements, bound to one transaction. */
export interface StoreTx {
  requests: ReturnType<typeof createRequestStore>;
  runs: ReturnType<typeof createRunStore>;
  state: ReturnType<typeof createSyncStateStore>;
  quarantine: ReturnType<typeof createQuarantineStore>;
  checkpoints: ReturnType<typeof createCheckpointStore>;
  intakeGaps: ReturnType<typeof createIntakeGapStore>;
  drift: ReturnType<typeof createDriftStore>;
  events: ReturnType<typeof createEventStore>;
  outbox: ReturnType<typeof createOutboxStore>;
  feedCursors: ReturnType<typeof createFeedCursorStore>;
  /** The transaction's statements, for what the stores above do not cover. */
  sql: Sql;
  /**
   * Runs `work` in a savepoint: when it throws, what it wrote is rolled back (and forgotten by
   * the store's caches) and the transaction goes on. One request's writes in a batch of many.
   */
  savepoint<T>(work: () => Promise<T>): Promise<T>;
  /** Now, in canonical form. */
  now(): string;
}

/**
 * The one store every path writes through (poll, backfill, webhooks, outbox, operations), on
 * either engine, so guards and the change log apply alike. Work runs in a transaction and gets
 * every table's statements bound to it: `store.transaction(async (tx) => tx.runs.start(...))`.
 */
export function createStore({ db, clock, log }: { db: Connection; clock: Clock; log?: Logger }) {
  const now = () => isoFromMs(clock.now());
  const written = createSharedWrittenCache();
  // Told after each commit that logged changes: the change feed's publishers wake at once.
  const changeListeners = new Set<() => void>();
  // Each kind of drift (source, member, problem) is logged once by this store, when first
  // recorded: a drifted member shows on every request, and a line per request would bury the
  // log. schema_drift, status and /metrics count every request. The member and the first
  // request, never a value.
  const driftLog = log?.child({ area: 'schema' });
  const loggedDrift = new Set<string>();
  const onNew = (d: NewDrift) => {
    const kind = `${d.source}|${d.member}|${d.problem}`;
    if (loggedDrift.has(kind)) return;
    loggedDrift.add(kind);
    driftLog?.warn(
      {
        requestId: d.requestId,
        source: d.source,
        member: d.member,
        problem: d.problem,
        expected: d.expected,
        received: d.received,
      },
      'schema drift: a member differs from the documented shape (logged once; status counts it)',
    );
  };
  // SQLite hands every transaction the same Sql: its bound stores are built once. A Sql serves
  // one transaction at a time, which sets the cache layer its stores see.
  const bound = new WeakMap<
    Sql,
    { tx: StoreTx; layer: { cache: TransactionCache }; changes: ChangeLog }
  >();
  const bind = (sql: Sql, cache: TransactionCache) => {
    let entry = bound.get(sql);
    if (!entry) {
      const layer = { cache };
      const changes = createChangeLog(sql, now);
      const tx: StoreTx = {
        requests: createRequestStore(sql, () => layer.cache, changes),
        runs: createRunStore(sql),
        state: createSyncStateStore(sql),
        quarantine: createQuarantineStore(sql),
        checkpoints: createCheckpointStore(sql),
        intakeGaps: createIntakeGapStore(sql),
        drift: createDriftStore(sql, { onNew }),
        events: createEventStore(sql, changes),
        outbox: createOutboxStore(sql),
        feedCursors: createFeedCursorStore(sql),
        sql,
        async savepoint(work) {
          try {
            return await changes.savepoint(work);
          } catch (error) {
            // An account or facility written by the rolled-back work is not stored after all.
            layer.cache.distrustPending();
            throw error;
          }
        },
        now,
      };
      entry = { tx, layer, changes };
      bound.set(sql, entry);
    }
    entry.layer.cache = cache;
    return entry;
  };
  return {
    db,
    now,
    /**
     * Runs `work` in one write transaction; a throw rolls it all back. Never nest them. A
     * transaction PostgreSQL failed for a concurrent one (a deadlock) is run again, from the
     * start, a few times (conflicts.ts): `work` must do nothing outside the database that a second
     * run would repeat. A caller that runs parts of its work again itself (a batcher) passes
     * `isConflictRetried: false` and gets the conflict.
     */
    transaction<T>(
      work: (tx: StoreTx) => Promise<T>,
      { isConflictRetried = true }: { isConflictRetried?: boolean } = {},
    ): Promise<T> {
      const once = async () => {
        // What this attempt writes is its own until it commits; a rollback drops it unmerged.
        const cache = written.begin();
        let logged = 0;
        const result = await db.transaction(async (sql) => {
          const { tx, changes } = bind(sql, cache);
          changes.reset();
          const done = await work(tx);
          // Last: on PostgreSQL the change rows take their positions in commit order here.
          await changes.flush();
          logged = changes.loggedCount();
          return done;
        });
        cache.commit();
        if (logged > 0) for (const listener of changeListeners) listener();
        return result;
      };
      return isConflictRetried ? retryWriteConflicts(once) : once();
    },
    /** Calls `listener` after each commit of this store that logged changes; returns its removal. */
    onChangesCommitted(listener: () => void): () => void {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
    /** Runs `work` with reads only. */
    read: <T>(work: (tx: StoreTx) => Promise<T>, options?: ReadOptions): Promise<T> =>
      db.read((sql) => work(bind(sql, written.begin()).tx), options),
  };
}

/** The store's interface. */
export type Store = ReturnType<typeof createStore>;
