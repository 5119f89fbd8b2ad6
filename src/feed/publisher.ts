import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.js';
import type { Store } from '../db/store.js';
import { describeError } from '../errors.js';
import type { Logger } from '../log.js';
import { isoFromMs } from '../time.js';
import { changeDocument, type ChangeDocument } from './document.js';
import type { FeedReader } from './reader.js';

/** A change of the feed as the publisher can look it up: what identifies it. */
export interface FeedChangeKey {
  request_id: string;
  committed_at: string;
}

/** Where the feed goes: an outbound webhook, NOTIFY, NATS. */
export interface Sink {
  /** Names its cursor; stable once published (retention and status read it). */
  name: string;
  isPhiIncluded: boolean;
  /**
   * Delivers documents in order, calling `acknowledged` with each position the receiver took;
   * throws when one was not taken (the rest are not tried). `changeAt` looks up a change of
   * the feed by position (undefined: none kept), for a sink that checks what it holds.
   */
  deliver(
    documents: readonly ChangeDocument[],
    signal: AbortSignal,
    acknowledged: (position: number) => void,
    changeAt: (position: number) => Promise<FeedChangeKey | undefined>,
  ): Promise<void>;
  close(): Promise<void>;
}

/** How a publisher paces itself. */
export interface PublisherTiming {
  /** How often it looks for new changes when it has caught up. */
  pollMs: number;
  /** First pause after a failed delivery; doubled per failure up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Changes read and delivered per round. */
  batchSize: number;
}

/**
 * A commit of this process wakes the publisher at once (the webhook applier's, the poll's), so
 * the look at the database is for what other processes commit (a backfill, a `sync` beside the
 * daemon): once a second costs the database next to nothing.
 */
export const DEFAULT_TIMING: PublisherTiming = {
  pollMs: 1_000,
  backoffMs: 500,
  maxBackoffMs: 60_000,
  batchSize: 100,
};

/** What a running publisher reports. */
export interface PublisherState {
  sink: string;
  /** The last position the sink acknowledged. */
  position: number;
  /** Failed deliveries in a row (0 when the last one went through). */
  failures: number;
  lastError: string | null;
}

/** A publisher, running. */
export interface Publisher {
  state(): PublisherState;
  /** Look for new changes now (a commit in this process). */
  wake(): void;
  /** Resolves once it has delivered every change committed before the call (tests). */
  caughtUp(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Delivers the change feed to one sink, at least once and in position (commit) order, from a
 * durable cursor: the position the sink last acknowledged, kept in sync_state and saved after
 * each round. A process killed between a delivery and the save delivers that round again, which
 * receivers deduplicate by position. A new cursor starts at 0: the sink receives every change
 * still kept, history included. A failed delivery is retried after a pause that doubles up to
 * a minute, with jitter; nothing after it goes out before it does.
 */
export function startPublisher({
  sink,
  store,
  reader,
  clock,
  log,
  timing = DEFAULT_TIMING,
  random = Math.random,
}: {
  sink: Sink;
  store: Store;
  reader: FeedReader;
  clock: Clock;
  log: Logger;
  timing?: PublisherTiming;
  random?: () => number;
}): Publisher {
  const controller = new AbortController();
  const { signal } = controller;
  const state: PublisherState = { sink: sink.name, position: 0, failures: 0, lastError: null };
  let wakeUp = new AbortController();
  // Callers of caughtUp(), in call order: each is settled by the first round that begins after
  // its call and finds nothing left to deliver.
  const waiters: (() => void)[] = [];

  /**
   * Waits `ms`, or less when stopped; a wake-up (a commit) ends the wait too unless it is a
   * backoff: a receiver that is down must not be retried at every commit.
   */
  async function pause(ms: number, { isWakeable }: { isWakeable: boolean }): Promise<void> {
    const ends = isWakeable ? AbortSignal.any([signal, wakeUp.signal]) : signal;
    await sleep(ms, undefined, { signal: ends }).catch(() => undefined);
    if (wakeUp.signal.aborted) wakeUp = new AbortController();
  }

  const saveCursor = (position: number) =>
    store.transaction((tx) => tx.feedCursors.set(sink.name, position, isoFromMs(clock.now())));

  /** One round: reads after the cursor and delivers; resolves to whether it found any. */
  async function round(): Promise<boolean> {
    const page = await reader.readAfter(state.position, timing.batchSize);
    if (page.changes.length === 0) return false;
    const documents = page.changes.map((change) =>
      changeDocument(change, page.overviews.get(change.request_id), {
        isPhiIncluded: sink.isPhiIncluded,
      }),
    );
    let acknowledged = state.position;
    try {
      await sink.deliver(
        documents,
        signal,
        (position) => (acknowledged = position),
        async (position) =>
          (await reader.readAfter(position - 1, 1)).changes.find(
            (change) => change.position === position,
          ),
      );
    } finally {
      if (acknowledged > state.position) {
        await saveCursor(acknowledged);
        state.position = acknowledged;
        // It took something: a failure after this starts a new streak.
        state.failures = 0;
      }
    }
    return true;
  }

  async function loop(): Promise<void> {
    let isCursorRead = false;
    while (!signal.aborted) {
      try {
        if (!isCursorRead) {
          state.position = (await store.read((tx) => tx.feedCursors.get(sink.name))) ?? 0;
          isCursorRead = true;
        }
        // The callers of caughtUp() so far: this round settles them if it finds nothing left.
        const waiting = waiters.length;
        const hadFailed = state.failures > 0;
        const found = await round();
        if (hadFailed) log.info({ sink: sink.name }, 'feed sink delivering again');
        state.failures = 0;
        state.lastError = null;
        if (!found) {
          for (const resolve of waiters.splice(0, waiting)) resolve();
          await pause(timing.pollMs, { isWakeable: true });
        }
      } catch (error) {
        if (signal.aborted) break;
        state.failures += 1;
        const { code, message } = describeError(error);
        state.lastError = message;
        const backoff = Math.min(
          timing.maxBackoffMs,
          timing.backoffMs * 2 ** Math.min(state.failures - 1, 20),
        );
        const waitMs = Math.round(backoff * (0.5 + random() / 2));
        // The first failure of a streak, then every tenth: a receiver down for hours logs a
        // line every ten minutes or so, not one a minute.
        if (state.failures === 1 || state.failures % 10 === 0) {
          log.warn(
            { sink: sink.name, code, err: message, failures: state.failures, retryInMs: waitMs },
            'feed sink delivery failed; retrying',
          );
        }
        await pause(waitMs, { isWakeable: false });
      }
    }
  }

  const running = loop().catch((error: unknown) => {
    log.error({ sink: sink.name, err: describeError(error) }, 'feed publisher stopped');
  });

  return {
    state: () => ({ ...state }),
    wake: () => wakeUp.abort(),
    caughtUp() {
      const caught = new Promise<void>((resolve) => waiters.push(resolve));
      wakeUp.abort();
      return caught;
    },
    async stop() {
      controller.abort();
      await running;
      await sink.close();
    },
  };
}
