/**
 * What a batch of detail observations means for the mirror, decided without I/O: each one
 * planned by planDetailWrite in order, against the stored row as the batch's earlier writes left
 * it, and the results gathered into the rows of each table, so that src/db writes the batch with
 * one statement per table. Applied, the plan leaves the tables as writing the observations one at
 * a time would.
 */
import type { AccountRow, FacilityRow, FieldRow, LocationRow } from '../db/schema/index.js';
import type { RequestWrite, StoredRow, WriteOutcome } from './observations.js';
import { planDetailWrite, type ChangeRow, type DetailRow } from './request-plan.js';

/** An accounts or facilities row as written: with the time of the observation that wrote it. */
export type SharedRow<Row> = Row & { updated_at: string };

/** The rows a batch of detail observations writes, table by table. */
export interface DetailBatchPlan {
  /** Each observation's outcome, in the batch's order. */
  outcomes: WriteOutcome[];
  /** The requests rows to upsert: each id's last planned row, by id. */
  rows: DetailRow[];
  /**
   * Rows the batch does not otherwise rewrite whose unchanged observations move their read time
   * (unsettled rows) or bring a text not received before, by id; null keeps the stored value.
   */
  touched: { request_id: string; read_at: string | null; received_digest: string | null }[];
  /** Ids whose locations and fields are replaced by those below (by id). */
  replacedIds: string[];
  locations: LocationRow[];
  fields: FieldRow[];
  /** Accounts and facilities to upsert: each key's last write, once per key. */
  accounts: SharedRow<AccountRow>[];
  facilities: SharedRow<FacilityRow>[];
  /** What the written cache learns once these are stored (key, value), in order. */
  learned: [string, string][];
  /** The change-log rows, in the batch's order. */
  changes: ChangeRow[];
}

/** The written cache's key of an account. */
export const accountKey = (account: Pick<AccountRow, 'account_id'>) =>
  `account:${account.account_id}`;
/** The written cache's key of a facility. */
export const facilityKey = (facility: Pick<FacilityRow, 'facility_id'>) =>
  `facility:${facility.facility_id}`;

/** What one request comes to over the batch. */
interface Pending {
  stored: StoredRow | undefined;
  row?: DetailRow;
  /** What unchanged observations move in a row the batch does not otherwise rewrite. */
  touch?: { read_at: string | null; received_digest: string | null };
  children?: { locations: LocationRow[]; fields: FieldRow[] };
}

/**
 * Plans `observations` in order against `stored` (the rows as loaded, by id). `known` is what
 * the written cache holds for a key: an account or facility already written with the same values
 * is not written again, as `write` skips it.
 */
export function planDetailBatch(
  stored: ReadonlyMap<string, StoredRow>,
  observations: readonly RequestWrite[],
  known: (key: string) => string | undefined,
): DetailBatchPlan {
  const requests = new Map<string, Pending>();
  const shared = sharedWrites(known);
  const outcomes: WriteOutcome[] = [];
  const changes: ChangeRow[] = [];
  for (const observation of observations) {
    const { normalized, observedAt } = observation;
    const id = normalized.content.request_id;
    let pending = requests.get(id);
    if (!pending) {
      pending = { stored: stored.get(id) };
      requests.set(id, pending);
    }
    const plan = planDetailWrite(pending.stored, observation);
    outcomes.push(plan.outcome);
    if (plan.outcome === 'stale') continue;
    if (plan.outcome === 'unchanged') {
      const { readAt, receivedDigest } = plan;
      if (readAt === null && receivedDigest === null) continue;
      // The next observation of this id sees the row as it would after the UPDATE.
      const moved = {
        ...(readAt !== null && { read_at: readAt }),
        ...(receivedDigest !== null && { received_digest: receivedDigest }),
      };
      pending.stored = { ...pending.stored!, ...moved };
      if (pending.row) pending.row = { ...pending.row, ...moved };
      else pending.touch = { read_at: null, received_digest: null, ...pending.touch, ...moved };
      continue;
    }
    const { source: _source, raw_json: _raw, ...written } = plan.row;
    pending.stored = written;
    pending.row = plan.row;
    pending.touch = undefined;
    if (plan.isChildrenReplaced) {
      pending.children = { locations: normalized.locations, fields: normalized.fields };
    }
    if (normalized.account) shared.account(normalized.account, observedAt);
    if (normalized.facility) shared.facility(normalized.facility, observedAt);
    changes.push(plan.change);
  }

  // By id: two batches that share requests take their row locks in one order (PostgreSQL).
  const ids = [...requests.keys()].sort();
  const plan: DetailBatchPlan = {
    outcomes,
    rows: [],
    touched: [],
    replacedIds: [],
    locations: [],
    fields: [],
    accounts: shared.accounts(),
    facilities: shared.facilities(),
    learned: shared.learned(),
    changes,
  };
  for (const id of ids) {
    const { row, touch, children } = requests.get(id)!;
    if (row) plan.rows.push(row);
    if (touch) plan.touched.push({ request_id: id, ...touch });
    if (!children) continue;
    plan.replacedIds.push(id);
    plan.locations.push(...children.locations);
    plan.fields.push(...children.fields);
  }
  return plan;
}

/**
 * Accounts and facilities written over a batch, as one upsert each: the cache skips a row
 * written with the same values before, and a key written twice keeps its last values, except an
 * account's facilities, which a later write without them (facilities null) leaves as they were.
 */
function sharedWrites(known: (key: string) => string | undefined) {
  const values = new Map<string, string>();
  const accounts = new Map<string, SharedRow<AccountRow>>();
  const facilities = new Map<string, SharedRow<FacilityRow>>();
  /** Whether the row must be written, recording its value when it must. */
  const isWritten = (key: string, row: object): boolean => {
    const value = JSON.stringify(row);
    const before = values.has(key) ? values.get(key) : known(key);
    if (before === value) return false;
    values.set(key, value);
    return true;
  };
  return {
    account(account: AccountRow, at: string): void {
      const key = accountKey(account);
      if (!isWritten(key, account)) return;
      const facilitiesJson = account.facilities_json ?? accounts.get(key)?.facilities_json;
      accounts.set(key, { ...account, facilities_json: facilitiesJson ?? null, updated_at: at });
    },
    facility(facility: FacilityRow, at: string): void {
      const key = facilityKey(facility);
      if (isWritten(key, facility)) facilities.set(key, { ...facility, updated_at: at });
    },
    accounts: () => sortedBy([...accounts.values()], (row) => row.account_id),
    facilities: () => sortedBy([...facilities.values()], (row) => row.facility_id),
    learned: (): [string, string][] => [...values],
  };
}

function sortedBy<T>(rows: T[], key: (row: T) => string): T[] {
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
