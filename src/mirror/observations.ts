/**
 * What the mirror is told about requests (observations) and what it holds of them (stored
 * rows), in the shapes of the tables (src/db/schema describes them).
 */
import type {
  AccountRow,
  FacilityRow,
  FieldRow,
  LocationRow,
  RequestContent,
  RequestRow,
} from '../db/schema/index.js';

/** How a write went: a new request, a change, nothing new, or older than what is stored. */
export type WriteOutcome = 'new' | 'changed' | 'unchanged' | 'stale';

/** Where a write came from; recorded in requests.source and request_changes.source. */
export type WriteSource = 'poll' | 'backfill' | 'webhook' | 'action';

/** Everything one detail record becomes: the rows of the request tables. */
export interface NormalizedRequest {
  content: RequestContent;
  locations: LocationRow[];
  fields: FieldRow[];
  account: AccountRow | null;
  facility: FacilityRow | null;
  contentHash: string;
}

/** One observation of a request, ready to store. */
export interface RequestWrite {
  normalized: NormalizedRequest;
  /** The record exactly as received. */
  rawJson: string;
  source: WriteSource;
  /** When this observation was made (canonical ISO); orders writes that lack last_updated. */
  observedAt: string;
  /** When the service read the record, on its clock (canonical ISO; default observedAt). */
  readAt?: string;
}

/** A webhook event's data object, and the stored event (webhook_events) that carried it. */
export interface EventData {
  eventId: string;
  data: unknown;
}

/**
 * An observation that carries only some of the content columns: a webhook's data object. It has
 * no last_updated, so only the time it was made orders it against what is stored.
 */
export interface PartialRequestWrite {
  /** The row's content; columns in `unknownColumns` are ignored, a null list_state is unknown. */
  content: RequestContent;
  /** Columns the observation does not carry: the stored values stay. */
  unknownColumns: readonly (keyof RequestContent)[];
  /** Locations by role (ids unknown); a role missing here is removed. */
  locations: LocationRow[];
  /** The account's name as the observation shows it; its other columns stay as stored. */
  account: { account_id: string; name: string | null } | null;
  /**
   * The record as sent, for requests.raw_json: its JSON text, or the data object of the stored
   * webhook event that carried it, which the store may take from webhook_events instead of
   * sending it again.
   */
  rawJson: string | EventData;
  source: WriteSource;
  observedAt: string;
  /**
   * Set when a later event (by event id) already marked the request unavailable, at this time:
   * the data is stored, and the request stays unavailable, as when the two arrive in order.
   */
  laterUnavailableAt?: string;
}

/** A requests row as the store reads it back before writing. */
export type StoredRow = Omit<RequestRow, 'source' | 'raw_json'>;

/** The stored columns the poll compares a list item with. */
export interface StoredSummary {
  request_id: string;
  list_state: string | null;
  event_dt_utc: string | null;
  last_updated_timestamp_utc: string | null;
  unavailable_at: string | null;
  read_at: string | null;
  /**
   * The digest of the text the row holds while it can be held as sent (available, nothing in
   * quarantine); null otherwise, or when no text's digest is recorded.
   */
  held_digest: string | null;
}
