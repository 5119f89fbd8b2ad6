import type Database from 'better-sqlite3';
import {
  CONTENT_COLUMNS,
  type AccountRow,
  type NormalizedRequest,
  type RequestContent,
} from '../sync/normalize.js';

/** How a write went: a new request, a change, nothing new, or older than what is stored. */
export type WriteOutcome = 'new' | 'changed' | 'unchanged' | 'stale';

/** Where a write came from; recorded in requests.source and request_changes.source. */
export type WriteSource = 'poll' | 'backfill' | 'webhook' | 'action';

/** One observation of a request, ready to store. */
export interface RequestWrite {
  normalized: NormalizedRequest;
  /** The record exactly as received. */
  rawJson: string;
  source: WriteSource;
  /** When this observation was made (canonical ISO); orders writes that lack last_updated. */
  observedAt: string;
}

/** The stored columns the poll compares a list item with. */
export interface StoredSummary {
  request_id: string;
  list_state: string | null;
  event_dt_utc: string | null;
  last_updated_timestamp_utc: string | null;
  unavailable_at: string | null;
}

type StoredRow = RequestContent & {
  unavailable_at: string | null;
  synced_at: string;
  first_seen_at: string;
  content_hash: string | null;
};

/** Values kept from the stored row when the observation does not carry them. */
const KEPT_WHEN_UNKNOWN = [
  'list_state',
  'created_timestamp_utc',
  'last_updated_timestamp_utc',
] as const;

/** Reads and writes of the requests table and its child rows. Callers own the transaction. */
export function createRequestStore(sqlite: Database.Database) {
  const statements = prepare(sqlite);
  // Accounts repeat across thousands of requests; skip the upsert when nothing about one changed.
  const accountsWritten = new Map<string, string>();

  function writeAccount(account: AccountRow, at: string): void {
    const key = JSON.stringify(account);
    if (accountsWritten.get(account.account_id) === key) return;
    statements.upsertAccount.run({ ...account, updated_at: at });
    accountsWritten.set(account.account_id, key);
  }

  /** Stores one observation. Must run inside a write transaction. */
  function write({ normalized, rawJson, source, observedAt }: RequestWrite): WriteOutcome {
    const incoming = normalized.content;
    const stored = statements.selectRow.get(incoming.request_id) as StoredRow | undefined;
    if (stored && isOlder(incoming, observedAt, stored)) return 'stale';

    const merged: RequestContent = { ...incoming };
    if (stored) {
      for (const column of KEPT_WHEN_UNKNOWN) merged[column] ??= stored[column];
    }
    const changedColumns = stored ? diffColumns(stored, merged) : [];
    const isContentChanged = stored?.content_hash !== normalized.contentHash;
    const wasUnavailable = Boolean(stored?.unavailable_at);
    if (stored && changedColumns.length === 0 && !isContentChanged && !wasUnavailable) {
      return 'unchanged';
    }

    statements.upsertRequest.run({
      ...merged,
      unavailable_at: null,
      synced_at: observedAt,
      first_seen_at: stored?.first_seen_at ?? observedAt,
      source,
      content_hash: normalized.contentHash,
      raw_json: rawJson,
    });
    if (!stored || isContentChanged) {
      statements.deleteLocations.run(incoming.request_id);
      for (const location of normalized.locations) statements.insertLocation.run(location);
      statements.deleteFields.run(incoming.request_id);
      for (const field of normalized.fields) statements.insertField.run(field);
    }
    if (normalized.account) writeAccount(normalized.account, observedAt);
    if (normalized.facility)
      statements.upsertFacility.run({ ...normalized.facility, updated_at: observedAt });

    if (isContentChanged && stored && changedColumns.length === 0) changedColumns.push('raw_json');
    if (wasUnavailable) changedColumns.push('unavailable_at');
    statements.insertChange.run({
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
    });
    return stored ? 'changed' : 'new';
  }

  /**
   * Marks a request the service no longer shows us. The row and its history stay. Returns false
   * when it was already marked or is not stored.
   */
  function markUnavailable(requestId: string, at: string, source: WriteSource): boolean {
    const stored = statements.selectRow.get(requestId) as StoredRow | undefined;
    if (!stored || stored.unavailable_at) return false;
    statements.setUnavailable.run({ request_id: requestId, unavailable_at: at });
    statements.insertChange.run({
      request_id: requestId,
      observed_at: at,
      kind: 'unavailable',
      source,
      changed_columns: 'unavailable_at',
      old_state: stored.list_state,
      new_state: stored.list_state,
      old_values_json: JSON.stringify({ unavailable_at: null }),
      new_values_json: JSON.stringify({ unavailable_at: at }),
    });
    return true;
  }

  /** Stored summaries of requests whose event time lies in [from, to] (canonical ISO). */
  function summariesInWindow(from: string, to: string): StoredSummary[] {
    return statements.summariesInWindow.all({ from, to }) as StoredSummary[];
  }

  /** The stored summary of one request, if stored. */
  function summary(requestId: string): StoredSummary | undefined {
    return statements.summary.get(requestId) as StoredSummary | undefined;
  }

  return { write, markUnavailable, summariesInWindow, summary };
}

/** The request store's interface. */
export type RequestStore = ReturnType<typeof createRequestStore>;

/**
 * An observation older than what is stored never overwrites it. With both last_updated values,
 * they decide; otherwise the time each observation was made does.
 */
function isOlder(incoming: RequestContent, observedAt: string, stored: StoredRow): boolean {
  const incomingUpdated = incoming.last_updated_timestamp_utc;
  const storedUpdated = stored.last_updated_timestamp_utc;
  if (incomingUpdated && storedUpdated) return incomingUpdated < storedUpdated;
  return observedAt < stored.synced_at;
}

function diffColumns(stored: StoredRow, merged: RequestContent): string[] {
  return CONTENT_COLUMNS.filter((column) => stored[column] !== merged[column]);
}

function pick(row: object, columns: readonly string[]): string {
  const values = row as Record<string, unknown>;
  return JSON.stringify(
    Object.fromEntries(columns.map((column) => [column, values[column] ?? null])),
  );
}

function prepare(sqlite: Database.Database) {
  const requestColumns = [
    'request_id',
    ...CONTENT_COLUMNS,
    'unavailable_at',
    'synced_at',
    'first_seen_at',
    'source',
    'content_hash',
    'raw_json',
  ];
  const summaryColumns =
    'request_id, list_state, event_dt_utc, last_updated_timestamp_utc, unavailable_at';
  return {
    selectRow: sqlite.prepare(
      `SELECT ${['request_id', ...CONTENT_COLUMNS, 'unavailable_at', 'synced_at', 'first_seen_at', 'content_hash'].join(', ')} FROM requests WHERE request_id = ?`,
    ),
    summary: sqlite.prepare(`SELECT ${summaryColumns} FROM requests WHERE request_id = ?`),
    summariesInWindow: sqlite.prepare(
      `SELECT ${summaryColumns} FROM requests WHERE event_dt_utc BETWEEN @from AND @to`,
    ),
    upsertRequest: sqlite.prepare(
      `INSERT INTO requests (${requestColumns.join(', ')})
       VALUES (${requestColumns.map((column) => `@${column}`).join(', ')})
       ON CONFLICT (request_id) DO UPDATE SET
       ${requestColumns
         .filter((column) => column !== 'request_id')
         .map((column) => `${column} = excluded.${column}`)
         .join(', ')}`,
    ),
    setUnavailable: sqlite.prepare(
      'UPDATE requests SET unavailable_at = @unavailable_at WHERE request_id = @request_id',
    ),
    deleteLocations: sqlite.prepare('DELETE FROM request_locations WHERE request_id = ?'),
    insertLocation: sqlite.prepare(
      `INSERT INTO request_locations (request_id, role, location_id, lat, lng, zip, city, name, state, street, address, country)
       VALUES (@request_id, @role, @location_id, @lat, @lng, @zip, @city, @name, @state, @street, @address, @country)`,
    ),
    deleteFields: sqlite.prepare('DELETE FROM request_fields WHERE request_id = ?'),
    insertField: sqlite.prepare(
      'INSERT INTO request_fields (request_id, scope, name, value_json) VALUES (@request_id, @scope, @name, @value_json)',
    ),
    // exclude_facilities answers carry facilities null: that is not news, keep what was stored.
    upsertAccount: sqlite.prepare(
      `INSERT INTO accounts (account_id, name, service_levels_json, facilities_json, updated_at)
       VALUES (@account_id, @name, @service_levels_json, @facilities_json, @updated_at)
       ON CONFLICT (account_id) DO UPDATE SET name = excluded.name,
         service_levels_json = excluded.service_levels_json,
         facilities_json = COALESCE(excluded.facilities_json, accounts.facilities_json),
         updated_at = excluded.updated_at`,
    ),
    upsertFacility: sqlite.prepare(
      `INSERT INTO facilities (facility_id, name, account_id, updated_at)
       VALUES (@facility_id, @name, @account_id, @updated_at)
       ON CONFLICT (facility_id) DO UPDATE SET name = excluded.name,
         account_id = excluded.account_id, updated_at = excluded.updated_at`,
    ),
    insertChange: sqlite.prepare(
      `INSERT INTO request_changes (request_id, observed_at, kind, source, changed_columns, old_state, new_state, old_values_json, new_values_json)
       VALUES (@request_id, @observed_at, @kind, @source, @changed_columns, @old_state, @new_state, @old_values_json, @new_values_json)`,
    ),
  };
}
