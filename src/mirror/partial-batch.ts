import type { LocationRow } from '../db/schema/index.js';
import type { PartialRequestWrite, StoredRow, WriteOutcome } from './observations.js';
import {
  isPartialStale,
  planPartialWrite,
  type ChangeRow,
  type PartialRow,
} from './request-plan.js';

/** An account's name as a partial observation shows it, to store. */
export interface AccountName {
  account_id: string;
  name: string | null;
  updated_at: string;
}

/** What a batch of partial observations writes, table by table (planPartialBatch). */
export interface PartialBatchPlan {
  outcomes: WriteOutcome[];
  accountNames: AccountName[];
  rows: PartialRow[];
  /** The locations of these (request, role) pairs are deleted, then `locations` inserted. */
  movedRoles: { request_id: string; role: LocationRow['role'] }[];
  locations: LocationRow[];
  changes: ChangeRow[];
}

/**
 * Plans partial observations of distinct requests, each as the request store's writePartial
 * plans it alone (planPartialWrite), against the stored rows and locations.
 */
export function planPartialBatch(
  stored: ReadonlyMap<string, StoredRow>,
  storedLocations: ReadonlyMap<string, LocationRow[]>,
  observations: readonly PartialRequestWrite[],
): PartialBatchPlan {
  const plan: PartialBatchPlan = {
    outcomes: [],
    accountNames: [],
    rows: [],
    movedRoles: [],
    locations: [],
    changes: [],
  };
  for (const observation of observations) {
    const id = observation.content.request_id;
    const row = stored.get(id);
    const isUnderLaterMark = observation.laterUnavailableAt !== undefined;
    if (isPartialStale(row, observation.observedAt, isUnderLaterMark)) {
      plan.outcomes.push('stale');
      continue;
    }
    const one = planPartialWrite(row, storedLocations.get(id) ?? [], observation);
    if (one.outcome !== 'stale' && observation.account)
      plan.accountNames.push({ ...observation.account, updated_at: observation.observedAt });
    plan.outcomes.push(one.outcome);
    if (one.outcome === 'stale' || one.outcome === 'unchanged') continue;
    plan.rows.push(one.row);
    for (const role of one.movedRoles) plan.movedRoles.push({ request_id: id, role });
    for (const location of observation.locations)
      if (one.movedRoles.includes(location.role)) plan.locations.push(location);
    plan.changes.push(one.change);
  }
  return plan;
}

/** An account's name to write once for a batch: see foldAccountNames. */
export interface FoldedAccountName {
  name: AccountName;
  /**
   * Written whatever the stored name: the batch itself changed it (an earlier observation named
   * it otherwise). Else written only where the stored name differs, as each observation is.
   */
  isForced: boolean;
}

/**
 * A batch's account names, one per account, leaving the accounts as writing each in turn would:
 * each write replaces a name that differs (with its time), and keeps one that does not. So an
 * account ends with its last name, dated by the first observation of the batch's last run of
 * that name; if an earlier one named it otherwise, that run certainly changed it. One statement
 * may not update a row twice: accounts named by several events (most are) would otherwise go one
 * statement each.
 */
export function foldAccountNames(names: readonly AccountName[]): FoldedAccountName[] {
  const folded = new Map<string, FoldedAccountName>();
  for (const name of names) {
    const seen = folded.get(name.account_id);
    if (!seen) folded.set(name.account_id, { name, isForced: false });
    else if (seen.name.name !== name.name) folded.set(name.account_id, { name, isForced: true });
  }
  return [...folded.values()];
}
