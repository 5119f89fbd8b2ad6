import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/*
 * Checkpoints a SQLite mirror's write-ahead log from a thread of its own.
 *
 * SQLite checkpoints the WAL inside the COMMIT that takes it past wal_autocheckpoint pages: it
 * copies those pages into the database file and waits for both files to reach the disk
 * (synchronous=NORMAL syncs at checkpoints, not at commits). With the default of 1,000 pages,
 * one commit in three of a backfill stalled the writer for 20 to 35 ms, some 30 % of the store's
 * time. A second connection, in a worker thread, now runs those checkpoints (PASSIVE: it never
 * blocks the writer nor a reader) while the writer goes on, on the other core.
 *
 * SQLite's own checkpoint stays as the safety valve, at WAL_PAGES_BEFORE_WRITER_CHECKPOINTS: were
 * the thread to fall behind, stop or fail, the writer checkpoints as it always did, only later.
 * It is also what mostly starts the WAL over from its beginning: SQLite does so only when a
 * checkpoint has left nothing to copy at a writer's BEGIN, and a busy writer is always a commit
 * ahead of the thread. By then the thread has copied nearly every page, so it costs little.
 * A short command never starts the thread: it is started once the WAL first reaches
 * WAL_PAGES_BEFORE_THREAD, and the writer's last close checkpoints what is left, as before.
 */

/** SQLite's own checkpoint, in the writer's COMMIT: only if the thread has not kept up. */
export const WAL_PAGES_BEFORE_WRITER_CHECKPOINTS = 4_000;
/**
 * The WAL's size, in pages, that starts the thread. A first sync of 300 requests, committed a few
 * records at a time, writes 2,000 to 3,000 pages of WAL; below this, starting a thread costs more
 * than the one checkpoint of its close.
 */
export const WAL_PAGES_BEFORE_THREAD = 3_000;
/**
 * The least time between two checkpoints the thread starts. Each one ends with a sync of both
 * files, and a burst of small commits would otherwise ask for one each. A commit inside the
 * interval asks for none; the next one after it does. Longer intervals let the thread fall
 * behind a backfill (200 ms: the writer's own checkpoint then copied most of the WAL, 60 to 70 ms
 * in its commit).
 */
export const CHECKPOINT_INTERVAL_MS = 50;
/** How long a close waits for the thread's running checkpoint before it ends the thread. */
const CLOSE_WAIT_MS = 10_000;

/** What the checkpoint thread has done, for status and tests. */
export interface CheckpointStatus {
  /** Whether the thread has been started. */
  readonly isRunning: boolean;
  /** Checkpoints the thread has run. */
  readonly completed: number;
  /** The last failure of the thread or of a checkpoint, if any (the writer then checkpoints). */
  readonly lastError: Error | undefined;
  /** Checkpoints that failed, and the thread's own failure if it had one. */
  readonly failures: number;
  /** The thread stopped on a failure: the writer's own checkpoints do its work from then on. */
  readonly hasStopped: boolean;
  /** Calls `listener` with each failure as it happens (after `failures` and `hasStopped` count it). */
  onFailure(listener: (error: Error) => void): void;
  /** Resolves once no checkpoint is running or asked for. */
  settled(): Promise<void>;
}

export interface Checkpointer extends CheckpointStatus {
  /** Called after each write transaction's COMMIT: starts the thread or asks it to checkpoint. */
  afterCommit(): void;
  /** Stops the thread, after the checkpoint it is running; before the writer's own close. */
  close(): Promise<void>;
}

/*
 * The thread's code. It is plain JavaScript given as text, not a module file: the same code then
 * runs from the bundle, from tsc's output and from the TypeScript sources under test, and it
 * loads nothing but better-sqlite3 (resolved by the main thread, so the working directory does
 * not matter). The statement is prepared once and kept, as pin.ts wants of every statement on
 * Node 24.
 */
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
let checkpoint;
try {
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
  checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
} catch (error) {
  parentPort.postMessage({ error: String(error.message), code: error.code, isFatal: true });
  parentPort.close();
}
if (db) {
  parentPort.on('message', (message) => {
    if (message === 'close') {
      db.close();
      parentPort.close();
      return;
    }
    try {
      checkpoint.get();
      parentPort.postMessage({ isDone: true });
    } catch (error) {
      parentPort.postMessage({ error: String(error.message), code: error.code });
    }
  });
}
`;

/** A checkpoint's end, or a failure reported as data (fatal: the thread could not start). */
type ThreadMessage = { isDone: true } | { error: string; code?: string; isFatal?: boolean };

/** A failure the thread reported, as an Error with SQLite's code. */
const failureOf = ({ error, code }: { error: string; code?: string }) =>
  Object.assign(new Error(`the WAL's checkpoint thread: ${error}`), { code });

const driverPath = () => createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * The checkpointer of the database file at `path`, whose pages are `pageSize` bytes; `now` (ms,
 * monotonic) paces it.
 */
export function createCheckpointer(
  path: string,
  pageSize: number,
  { now = () => performance.now(), intervalMs = CHECKPOINT_INTERVAL_MS } = {},
): Checkpointer {
  const walPath = `${path}-wal`;
  let lastStartedAt = -Infinity;
  let worker: Worker | undefined;
  let hasStopped = false;
  let isClosed = false;
  let isCheckpointing = false;
  let isAsked = false;
  let completed = 0;
  let lastError: Error | undefined;
  let failures = 0;
  const failureListeners: ((error: Error) => void)[] = [];
  let waiters: (() => void)[] = [];

  const wakeWaiters = () => {
    if (isCheckpointing || isAsked) return;
    const waiting = waiters;
    waiters = [];
    for (const wake of waiting) wake();
  };
  const recordFailure = (error: Error) => {
    lastError = error;
    failures += 1;
    for (const listener of failureListeners) listener(error);
  };
  const fail = (error: Error) => {
    hasStopped = true;
    isCheckpointing = false;
    isAsked = false;
    worker = undefined;
    recordFailure(error);
    wakeWaiters();
  };
  const checkpoint = () => {
    if (!worker || isCheckpointing) {
      isAsked = worker !== undefined;
      return;
    }
    isAsked = false;
    isCheckpointing = true;
    lastStartedAt = now();
    worker.postMessage('checkpoint');
  };
  const onMessage = (message: ThreadMessage) => {
    if ('error' in message && message.isFatal) return fail(failureOf(message));
    isCheckpointing = false;
    if ('error' in message) recordFailure(failureOf(message));
    else completed += 1;
    if (isAsked) checkpoint();
    wakeWaiters();
  };
  const walPages = () => {
    try {
      return statSync(walPath).size / pageSize;
    } catch {
      return 0;
    }
  };
  const start = () => {
    const thread = new Worker(THREAD_CODE, {
      eval: true,
      workerData: { driver: driverPath(), path },
    });
    // A thread that checkpoints must not keep a finished command alive.
    thread.unref();
    thread.on('message', onMessage);
    // Its own failure (a module that did not load): the error arrives as it was thrown there.
    thread.on('error', (error) =>
      fail(
        error instanceof Error ? error : new Error(`the WAL's checkpoint thread: ${String(error)}`),
      ),
    );
    thread.on('exit', () => {
      if (worker === thread && !isClosed) fail(new Error('the checkpoint thread stopped'));
    });
    worker = thread;
  };

  return {
    get isRunning() {
      return worker !== undefined;
    },
    get completed() {
      return completed;
    },
    get lastError() {
      return lastError;
    },
    get failures() {
      return failures;
    },
    get hasStopped() {
      return hasStopped;
    },
    onFailure(listener) {
      failureListeners.push(listener);
    },
    settled: () =>
      isCheckpointing || isAsked ? new Promise((wake) => waiters.push(wake)) : Promise.resolve(),
    afterCommit() {
      if (isClosed || hasStopped) return;
      if (!worker) {
        if (walPages() < WAL_PAGES_BEFORE_THREAD) return;
        start();
      }
      if (now() - lastStartedAt >= intervalMs) checkpoint();
    },
    async close() {
      isClosed = true;
      const thread = worker;
      if (!thread) return;
      worker = undefined;
      const exited = new Promise((done) => thread.once('exit', done));
      // Held now, or a command whose last work is this close would end before the thread does.
      thread.ref();
      thread.postMessage('close');
      // It ends after the checkpoint it is running; one that never ends must not hold a stop.
      const stuck = setTimeout(() => void thread.terminate(), CLOSE_WAIT_MS);
      stuck.unref();
      await exited;
      clearTimeout(stuck);
      isCheckpointing = false;
      isAsked = false;
      wakeWaiters();
    },
  };
}
