/**
 * What writing webhook profiles means for the change log, decided without I/O: a profile that
 * is written (no later event wrote the request's) over a stored one it differs from is a change
 * of kind `profile`, naming the request_profiles columns that changed with their values before
 * and after. The feed carries it beside the requests table's own changes. A request's first
 * profile is no change of its own: the event that carries it also writes the requests row, whose
 * change (`created`, or `updated`) the log already has.
 */
import { PROFILE_COLUMNS, type ProfileRow } from '../db/schema/index.js';
import type { ChangeRow } from './request-plan.js';
import { pick } from './rules.js';

/** A profile to write, with the event that carried it. */
export interface ProfileObservation {
  profile: ProfileRow;
  eventId: string;
  /** The event's event_timestamp: when the change happened (the change's observed_at). */
  updatedAt: string;
}

/** A stored request_profiles row, as the connection reads it. */
export type StoredProfile = Record<string, unknown> & { event_id: string };

/** The columns compared: every profile column but the key. */
const COMPARED = PROFILE_COLUMNS.filter((column) => column !== 'request_id');

/** JSON columns compare by content: PostgreSQL may store the same object with keys reordered. */
const isJsonColumn = (column: string) => column.endsWith('_json');

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function isSameValue(column: string, stored: unknown, incoming: unknown): boolean {
  const a = stored ?? null;
  const b = incoming ?? null;
  if (a === b) return true;
  if (a === null || b === null) return false;
  if (isJsonColumn(column) && typeof a === 'string' && typeof b === 'string') {
    try {
      return canonicalJson(JSON.parse(a)) === canonicalJson(JSON.parse(b));
    } catch {
      return false;
    }
  }
  return false;
}

/** The profile columns whose values differ. */
export function changedProfileColumns(stored: StoredProfile, incoming: ProfileRow): string[] {
  return COMPARED.filter((column) => !isSameValue(column, stored[column], incoming[column]));
}

/**
 * Whether a profile write takes effect: a later event (by event_id) that already wrote the
 * request's profile wins, as the upsert's guard has it.
 */
export const isProfileWritten = (stored: StoredProfile | undefined, eventId: string): boolean =>
  stored === undefined || eventId >= stored.event_id;

/**
 * The change-log rows of a set of profile writes, one request each, against the stored
 * profiles: a `profile` row per written profile that changed a stored one.
 */
export function planProfileChanges(
  writes: readonly ProfileObservation[],
  stored: ReadonlyMap<string, StoredProfile>,
): ChangeRow[] {
  return writes.flatMap(({ profile, eventId, updatedAt }) => {
    const before = stored.get(profile.request_id);
    if (!before || !isProfileWritten(before, eventId)) return [];
    const columns = changedProfileColumns(before, profile);
    if (columns.length === 0) return [];
    return [
      {
        request_id: profile.request_id,
        observed_at: updatedAt,
        kind: 'profile',
        source: 'webhook',
        changed_columns: columns.join(','),
        old_state: null,
        new_state: null,
        old_values_json: pick(before, columns),
        new_values_json: pick(profile, columns),
      },
    ];
  });
}
