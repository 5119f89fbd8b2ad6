import type { StoredSummary } from '../mirror/observations.js';
import { isSettled } from '../mirror/settled.js';
import { normalizeTimestamp } from '../time.js';
import type { ListItem } from './ports.js';

/**
 * A listed request needs its detail when it is new or marked unavailable, when its state or
 * last_updated differ from what is stored, or when the stored read is not settled (it was read
 * within the second of its last_updated; see mirror/settled.ts).
 */
export function needsDetail(item: ListItem, stored: StoredSummary | undefined): boolean {
  if (!stored || stored.unavailable_at) return true;
  if (stored.list_state !== item.state) return true;
  // Equality after normalizing, not order: any difference means the record changed.
  if (normalizeTimestamp(item.last_updated_timestamp_utc) !== stored.last_updated_timestamp_utc)
    return true;
  return !isSettled(stored);
}
