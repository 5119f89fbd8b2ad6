import { idsParam, isAmongIds } from '../db/set-sql.js';
import type { Connection } from '../db/sql.js';
import type { ChangeLogRow, OverviewRow } from './document.js';

/** request_overview's columns that hold a boolean (1 or 0 on both engines). */
const OVERVIEW_BOOLEANS = [
  'is_unavailable',
  'is_round_trip_first_trip',
  'is_round_trip_return_trip',
];

interface StoredChange extends Omit<ChangeLogRow, 'old_values' | 'new_values'> {
  old_values_json: string | null;
  new_values_json: string | null;
}

const parseValues = (json: string | null) =>
  json === null ? null : (JSON.parse(json) as Record<string, unknown>);

/** A page of the feed: change-log rows in position order, and their requests' overview rows. */
export interface FeedPage {
  changes: ChangeLogRow[];
  overviews: Map<string, OverviewRow>;
}

/**
 * Reads the change feed: request_changes after a position, in position order, which is commit
 * order on both engines (src/db/store/change-log.ts), with each request's request_overview row
 * as it is read just after. Two statements a page, whatever its size, and no transaction around
 * them: a snapshot would cost two more round trips on the path of every change to its sinks,
 * and buy nothing the document promises (its overview may already show a later change).
 */
export function createFeedReader(db: Connection) {
  const changesText = `SELECT change_id AS position, request_id, kind, source,
      COALESCE(committed_at, observed_at) AS committed_at, changed_columns, old_state, new_state,
      old_values_json, new_values_json
    FROM request_changes WHERE change_id > @after ORDER BY change_id LIMIT @limit`;
  const overviewText = `SELECT * FROM request_overview WHERE ${isAmongIds(db.dialect, 'request_id')}`;

  return {
    /** Up to `limit` changes after position `after` (0: from the oldest kept). */
    async readAfter(after: number, limit: number): Promise<FeedPage> {
      return db.read(async (sql) => {
        const stored = await sql.all<StoredChange>(changesText, { after, limit });
        const changes = stored.map(({ old_values_json, new_values_json, ...row }) => ({
          ...row,
          position: Number(row.position),
          old_values: parseValues(old_values_json),
          new_values: parseValues(new_values_json),
        }));
        const overviews = new Map<string, OverviewRow>();
        if (changes.length === 0) return { changes, overviews };
        const ids = [...new Set(changes.map((change) => change.request_id))];
        for (const row of await sql.all<OverviewRow>(overviewText, idsParam(db.dialect, ids))) {
          for (const column of OVERVIEW_BOOLEANS) {
            if (typeof row[column] === 'number') row[column] = row[column] === 1;
          }
          overviews.set(row.request_id, row);
        }
        return { changes, overviews };
      });
    },
  };
}

/** A change feed reader. */
export type FeedReader = ReturnType<typeof createFeedReader>;

/**
 * `reader`, with a read that another caller already started for the same page shared rather
 * than made again: the daemon's publishers, one per sink, are woken by the same commit and
 * mostly ask for the same page at once. A page is not changed by those who read it.
 */
export function sharingReads(reader: FeedReader): FeedReader {
  const running = new Map<string, Promise<FeedPage>>();
  return {
    readAfter(after, limit) {
      const key = `${after}:${limit}`;
      const known = running.get(key);
      if (known) return known;
      const read = reader.readAfter(after, limit).finally(() => running.delete(key));
      running.set(key, read);
      return read;
    },
  };
}
