/*
 * Settling. The service writes last_updated to the second, so two edits within one second share
 * it: a record read between them looks current to every later list, and the second edit would
 * never be fetched. A stored record is therefore trusted only once it was read at least a full
 * second after its last_updated, on the service's clock (read_at); until then each poll reads it
 * again. The cost is at most one extra detail read per edit.
 */

/** How far past last_updated a read must be for no later edit to share that second. */
export const SETTLE_MS = 1000;

/** The columns that decide whether a stored record is settled. */
export interface SettleColumns {
  last_updated_timestamp_utc: string | null;
  read_at: string | null;
}

/** True when no edit after the stored read can have kept the stored last_updated. */
export function isSettled(row: SettleColumns): boolean {
  const lastUpdated = row.last_updated_timestamp_utc;
  // Without a last_updated there is nothing a list could hide: the next list read decides.
  if (lastUpdated === null) return true;
  if (row.read_at === null) return false;
  return Date.parse(row.read_at) >= Date.parse(lastUpdated) + SETTLE_MS;
}
