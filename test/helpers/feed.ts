import type { Connection } from '../../src/db/sql.js';
import type { Store } from '../../src/db/store.js';
import { normalizeDetail } from '../../src/sync/normalize.js';
import { queryAll } from './engine.js';
import { detailRecord, listFields } from './records.js';

/** Stores a request per id, as a poll observed it at `at`, in one transaction: a change each. */
export async function writeRequests(store: Store, ids: string[], at: string): Promise<void> {
  await store.transaction(async (tx) => {
    for (const id of ids) {
      await tx.requests.write({
        normalized: normalizeDetail(detailRecord({ request_id: id }), listFields()),
        rawJson: '{}',
        source: 'poll',
        observedAt: at,
      });
    }
  });
}

/** Every position of the feed, in order. */
export async function feedPositions(db: Connection): Promise<number[]> {
  const rows = await queryAll<{ id: number }>(
    db,
    'SELECT change_id AS id FROM request_changes ORDER BY 1',
  );
  return rows.map((row) => Number(row.id));
}

/** `count` request ids: the prefix and a running number (AAAA0000, AAAA0001, ...). */
export const requestIds = (prefix: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

/** Positions in the order they first arrived: a repeat (a kill before a cursor save) dropped. */
export const firstArrivals = (positions: readonly number[]): number[] => [...new Set(positions)];
