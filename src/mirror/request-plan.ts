/**
 * What one observation of a request means for the mirror, decided without I/O: given the stored
 * row (or none), the row to write, whether its child rows are replaced, and the change-log row.
 * src/db/store applies these plans; the rules are unit-tested here, on their own.
 */
import { CONTENT_COLUMNS, type LocationRow, type RequestContent } from '../db/schema/index.js';
import type {
  EventData,
  PartialRequestWrite,
  RequestWrite,
  StoredRow,
  WriteSource,
} from './observations.js';
import { receivedDigest } from './digest.js';
import { changedRoles, diffColumns, isOlder, KEPT_WHEN_UNKNOWN, maxOf, pick } from './rules.js';
import { isSettled } from './settled.js';

/** A row of request_changes. */
export interface ChangeRow {
  request_id: string;
  observed_at: string;
  kind: 'created' | 'updated' | 'available' | 'unavailable' | 'profile';
  source: WriteSource;
  /** The changed columns, comma-separated. */
  changed_columns: string;
  old_state: string | null;
  new_state: string | null;
  old_values_json: string | null;
  new_values_json: string | null;
}

/** The requests row a detail write stores: the content and its bookkeeping. */
export type DetailRow = RequestContent & {
  /** Null clears a mark; a record read before the mark keeps it (see planDetailWrite). */
  unavailable_at: string | null;
  synced_at: string;
  read_at: string;
  first_seen_at: string;
  source: WriteSource;
  content_hash: string;
  raw_json: string;
  received_digest: string;
};

/** What a detail observation does to the mirror. */
export type DetailPlan =
  | { outcome: 'stale' }
  /**
   * Nothing new; `readAt` is the read time to store (an unsettled row), or null for none;
   * `receivedDigest` the digest of a text the row does not have yet (the same content sent
   * otherwise: members reordered, location ids), or null when it has it.
   */
  | { outcome: 'unchanged'; readAt: string | null; receivedDigest: string | null }
  | {
      outcome: 'new' | 'changed';
      row: DetailRow;
      /** Whether the locations and fields are replaced by the observation's. */
      isChildrenReplaced: boolean;
      change: ChangeRow;
    };

/** Plans a detail observation against the stored row. */
export function planDetailWrite(
  stored: StoredRow | undefined,
  observation: RequestWrite,
): DetailPlan {
  const { normalized, rawJson, source, observedAt } = observation;
  const readAt = observation.readAt ?? observedAt;
  const incoming = normalized.content;
  if (stored && isOlder(incoming, observedAt, stored)) return { outcome: 'stale' };

  const merged: RequestContent = { ...incoming };
  if (stored) {
    for (const column of KEPT_WHEN_UNKNOWN) merged[column] ??= stored[column];
  }
  const changedColumns = stored ? diffColumns(stored, merged) : [];
  const isContentChanged = stored?.content_hash !== normalized.contentHash;
  // A record read before the request was marked unavailable says nothing of it since: its data
  // may be newer than the row's, but the mark stays (no "available").
  const markKept =
    stored?.unavailable_at && observedAt < stored.unavailable_at ? stored.unavailable_at : null;
  const wasUnavailable = Boolean(stored?.unavailable_at) && markKept === null;
  const digest = receivedDigest(rawJson);
  if (stored && changedColumns.length === 0 && !isContentChanged && !wasUnavailable) {
    // Only an unsettled row needs its new read time; a settled one would only cost a write.
    const isReadAtMoved =
      !isSettled(stored) && (stored.read_at === null || stored.read_at < readAt);
    return {
      outcome: 'unchanged',
      readAt: isReadAtMoved ? readAt : null,
      receivedDigest: stored.received_digest === digest ? null : digest,
    };
  }

  const row: DetailRow = {
    ...merged,
    unavailable_at: markKept,
    synced_at: observedAt,
    read_at: readAt,
    first_seen_at: stored?.first_seen_at ?? observedAt,
    source,
    content_hash: normalized.contentHash,
    raw_json: rawJson,
    received_digest: digest,
  };
  if (isContentChanged && stored && changedColumns.length === 0) changedColumns.push('raw_json');
  if (wasUnavailable) changedColumns.push('unavailable_at');
  const change: ChangeRow = {
    request_id: incoming.request_id,
    observed_at: observedAt,
    kind: !stored ? 'created' : wasUnavailable ? 'available' : 'updated',
    source,
    changed_columns: stored ? changedColumns.join(',') : CONTENT_COLUMNS.join(','),
    old_state: stored?.list_state ?? null,
    new_state: merged.list_state,
    old_values_json: stored ? pick(stored, changedColumns) : null,
    new_values_json: pick(
      { ...merged, unavailable_at: null },
      stored ? changedColumns : [...CONTENT_COLUMNS],
    ),
  };
  return {
    outcome: stored ? 'changed' : 'new',
    row,
    isChildrenReplaced: !stored || isContentChanged,
    change,
  };
}

/**
 * The requests row a partial write stores; `is_changed` (0 or 1) keeps or clears the content
 * hash and the received digest (the row no longer holds what the last polled text said).
 */
export type PartialRow = RequestContent & {
  /** Null clears a mark; a mark kept under a later "unavailable" (laterUnavailableAt) stays. */
  unavailable_at: string | null;
  synced_at: string;
  first_seen_at: string;
  source: WriteSource;
  /** See PartialRequestWrite.rawJson: the store writes it as its engine can. */
  raw_json: string | EventData;
  is_changed: 0 | 1;
};

/** What a partial observation (a webhook's data) does to the mirror. */
export type PartialPlan =
  | { outcome: 'stale' }
  | { outcome: 'unchanged' }
  | {
      outcome: 'new' | 'changed';
      row: PartialRow;
      /** Roles whose location is replaced by the observation's (or removed). */
      movedRoles: LocationRow['role'][];
      change: ChangeRow;
    };

/**
 * Plans a partial observation against the stored row and its locations. A change clears
 * last_updated (and the store the content hash): they described the polled record this write
 * supersedes, so the next poll sees a difference and fetches the detail again.
 */
export function planPartialWrite(
  stored: StoredRow | undefined,
  storedLocations: LocationRow[],
  observation: PartialRequestWrite,
): PartialPlan {
  const { content, observedAt } = observation;
  const isUnderLaterMark = observation.laterUnavailableAt !== undefined;
  if (isPartialStale(stored, observedAt, isUnderLaterMark)) return { outcome: 'stale' };
  const merged: RequestContent = { ...content };
  const values = merged as unknown as Record<string, unknown>;
  for (const column of observation.unknownColumns) values[column] = stored?.[column] ?? null;
  if (stored) merged.list_state ??= stored.list_state;
  const movedRoles = changedRoles(storedLocations, observation.locations);
  const isChanged = !stored || diffColumns(stored, merged).length > 0 || movedRoles.length > 0;
  // Under a later mark the request stays unavailable: no "available" in between.
  const wasUnavailable = Boolean(stored?.unavailable_at) && !isUnderLaterMark;
  if (!isChanged && !wasUnavailable) return { outcome: 'unchanged' };
  if (stored && isChanged) merged.last_updated_timestamp_utc = null;

  const row: PartialRow = {
    ...merged,
    unavailable_at: isUnderLaterMark ? (stored?.unavailable_at ?? null) : null,
    synced_at: observedAt,
    first_seen_at: stored?.first_seen_at ?? observedAt,
    source: observation.source,
    raw_json: observation.rawJson,
    is_changed: isChanged ? 1 : 0,
  };
  const changedColumns = stored ? diffColumns(stored, merged) : [...CONTENT_COLUMNS];
  // Locations have no requests column: their change shows as the record (raw_json) changing.
  if (stored && isChanged && (changedColumns.length === 0 || movedRoles.length > 0)) {
    changedColumns.push('raw_json');
  }
  if (wasUnavailable) changedColumns.push('unavailable_at');
  const change: ChangeRow = {
    request_id: content.request_id,
    observed_at: observedAt,
    kind: !stored ? 'created' : wasUnavailable ? 'available' : 'updated',
    source: observation.source,
    changed_columns: changedColumns.join(','),
    old_state: stored?.list_state ?? null,
    new_state: merged.list_state,
    old_values_json: stored ? pick(stored, changedColumns) : null,
    new_values_json: pick({ ...merged, unavailable_at: null }, changedColumns),
  };
  return { outcome: stored ? 'changed' : 'new', row, movedRoles, change };
}

/**
 * Whether a partial observation made at `observedAt` is older than the last write or the
 * unavailable mark: an old "available" must not undo a mark. Under a later mark
 * (`isUnderLaterMark`, see PartialRequestWrite.laterUnavailableAt) it undoes nothing, and only
 * the last write counts. (The store asks before it reads the stored locations a plan needs.)
 */
export function isPartialStale(
  stored: StoredRow | undefined,
  observedAt: string,
  isUnderLaterMark = false,
): boolean {
  if (stored === undefined) return false;
  return (
    observedAt <
    (isUnderLaterMark ? stored.synced_at : maxOf(stored.synced_at, stored.unavailable_at))
  );
}

/**
 * Plans marking a request the service no longer shows us: the change-log row, or null when it
 * was already marked or is not stored, or, `isGuarded`, when the stored row was observed after
 * `at` (a late webhook must not mark a request a newer observation showed).
 */
export function planUnavailable(
  stored: StoredRow | undefined,
  at: string,
  source: WriteSource,
  { isGuarded = false }: { isGuarded?: boolean } = {},
): ChangeRow | null {
  if (!stored || stored.unavailable_at) return null;
  if (isGuarded && at < stored.synced_at) return null;
  return {
    request_id: stored.request_id,
    observed_at: at,
    kind: 'unavailable',
    source,
    changed_columns: 'unavailable_at',
    old_state: stored.list_state,
    new_state: stored.list_state,
    old_values_json: JSON.stringify({ unavailable_at: null }),
    new_values_json: JSON.stringify({ unavailable_at: at }),
  };
}
