import type { Drift } from '../api/contract.js';
import type { DetailLike } from './normalize.js';

/*
 * The narrow view of the service client that the sync engine needs. The real client satisfies
 * it; keeping it narrow keeps the engine testable and the dependency one-way.
 */

/** A partial-list item. */
export interface ListItem {
  id: string;
  state: string;
  created_timestamp_utc: string;
  event_dt_utc: string;
  last_updated_timestamp_utc: string;
}

/** A record the client refused to pass on: it failed validation. */
export interface Rejected {
  requestId: string | null;
  reason: string;
  raw: unknown;
  /** Drifted members, when the schema contract refused the record for them. */
  drift?: Drift[];
}

/** States the partial list serves; awaiting comes only from the full list. */
export type ListState = 'accepted' | 'completed' | 'canceled';

/** One page of the full list. */
export interface DetailsPage {
  page: number;
  pages: number;
  items: DetailLike[];
  raws: unknown[];
  /** Each item's drifted members (same index). */
  drifts: Drift[][];
  /** Each item's record as JSON text (same index), when the client kept it. */
  texts?: string[];
  rejected: Rejected[];
  /** Ids of records `isKnown` recognised, passed over unchecked (not in `items`). */
  known?: string[];
  /** The earliest moment the service can have read the page, on its clock (epoch ms). */
  readAtMs: number;
}

/** The result of a detail call: the record, or why it was refused. */
export type DetailResult = (
  | { kind: 'ok'; record: DetailLike; raw: unknown; drift: Drift[] }
  | { kind: 'rejected'; rejected: Rejected }
) & { readAtMs: number };

/** What the sync engine calls on the service. */
export interface SyncClient {
  listRequests(query: {
    from: number;
    to: number;
    state: ListState;
    signal?: AbortSignal;
  }): Promise<{ items: ListItem[]; rejected: Rejected[] }>;
  listRequestDetails(query: {
    from: number;
    to: number;
    state: 'awaiting' | ListState;
    signal?: AbortSignal;
    /**
     * Which records of a page the mirror holds exactly as sent, by id and the received digest
     * of the record's text: the client skips checking them.
     */
    isKnown?: (records: { id: string | null; digest: string }[]) => Promise<boolean[]>;
    /** Pages asked for ahead of the one being read (default the client's concurrency). */
    pagesAhead?: number;
  }): AsyncIterable<DetailsPage>;
  getRequest(id: string, options?: { signal?: AbortSignal }): Promise<DetailResult>;
}
