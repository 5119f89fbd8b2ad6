import { changeDocument, type ChangeDocument } from './document.js';
import type { FeedReader } from './reader.js';

/** Changes read per statement. */
const PAGE_SIZE = 500;

/** How to read the feed from a position. */
export interface StreamOptions {
  reader: FeedReader;
  /** The last position already had: changes after it are streamed. */
  after: number;
  /** Most changes to stream (Infinity: no limit). */
  limit: number;
  /** Keep waiting for new changes when the feed is read to its end. */
  isFollowing: boolean;
  isPhiIncluded: boolean;
  /** Ends a follow (SIGINT, SIGTERM). */
  signal: AbortSignal;
  /** Waits for more when following; resolves early when `signal` aborts. */
  pause: (signal: AbortSignal) => Promise<void>;
  /** Takes each document in feed order; may wait (a pipe that is full). */
  emit: (document: ChangeDocument) => Promise<void>;
}

/**
 * Streams the change feed from a position, in position (commit) order: page by page to its
 * end, then, when following, every change that commits afterwards. Resolves to the last
 * position streamed (`after` when none), from which a later stream goes on.
 */
export async function streamChanges(options: StreamOptions): Promise<number> {
  const { reader, limit, signal } = options;
  let after = options.after;
  let streamed = 0;
  while (streamed < limit && !signal.aborted) {
    const page = await reader.readAfter(after, Math.min(PAGE_SIZE, limit - streamed));
    for (const change of page.changes) {
      const overview = page.overviews.get(change.request_id);
      await options.emit(
        changeDocument(change, overview, { isPhiIncluded: options.isPhiIncluded }),
      );
      after = change.position;
      streamed += 1;
    }
    if (page.changes.length > 0) continue;
    if (!options.isFollowing) break;
    await options.pause(signal);
  }
  return after;
}
