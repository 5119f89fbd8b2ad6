/**
 * The rules every write decision is made of: which columns changed, which locations moved, which
 * observation is older, and how a change-log value is spelled.
 */
import {
  CONTENT_COLUMNS,
  LOCATION_MEMBERS,
  type LocationRow,
  type RequestContent,
} from '../db/schema/index.js';
import type { StoredRow } from './observations.js';

/** Values kept from the stored row when the observation does not carry them. */
export const KEPT_WHEN_UNKNOWN = [
  'list_state',
  'created_timestamp_utc',
  'last_updated_timestamp_utc',
] as const;

/** Roles whose location was added, removed or differs in any member but the id. */
export function changedRoles(
  stored: LocationRow[],
  incoming: LocationRow[],
): LocationRow['role'][] {
  const key = (row: LocationRow | undefined) =>
    row ? JSON.stringify(LOCATION_MEMBERS.map((member) => row[member])) : null;
  return (['pickup', 'destination'] as const).filter(
    (role) =>
      key(stored.find((row) => row.role === role)) !==
      key(incoming.find((row) => row.role === role)),
  );
}

/** Content columns whose stored and merged values differ. */
export function diffColumns(stored: StoredRow, merged: RequestContent): string[] {
  return CONTENT_COLUMNS.filter((column) => stored[column] !== merged[column]);
}

/** JSON of the named columns' values, for the change log. */
export function pick(row: object, columns: readonly string[]): string {
  const values = row as Record<string, unknown>;
  return JSON.stringify(
    Object.fromEntries(columns.map((column) => [column, values[column] ?? null])),
  );
}

/**
 * An observation older than what is stored never overwrites it. With both last_updated values,
 * they decide; otherwise the time each observation was made does.
 */
export function isOlder(incoming: RequestContent, observedAt: string, stored: StoredRow): boolean {
  const incomingUpdated = incoming.last_updated_timestamp_utc;
  const storedUpdated = stored.last_updated_timestamp_utc;
  if (incomingUpdated && storedUpdated) return incomingUpdated < storedUpdated;
  return observedAt < stored.synced_at;
}

/** The later of two canonical times (null is never later). */
export function maxOf(a: string, b: string | null): string {
  return b !== null && b > a ? b : a;
}
