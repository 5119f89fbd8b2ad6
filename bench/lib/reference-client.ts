/**
 * The reference client: what a competent developer writes in an afternoon to keep a copy of the
 * provider's requests, to set our figures against. Naive but reasonable, and honest: nothing in
 * it is slowed down on purpose, nothing tuned for the bench.
 *
 * - A token from the OAuth endpoint, kept until it expires.
 * - Each partial-list state (accepted, completed, canceled) listed over the window; a request
 *   whose last_updated differs from the one stored is fetched, 8 details at a time, and its raw
 *   JSON upserted as it arrives.
 * - awaiting (no partial list) read from the full list's pages, every record's raw JSON upserted,
 *   a transaction per page.
 * - Its own SQLite table (request_id, last_updated, raw_json), better-sqlite3 in WAL mode as its
 *   README advises. Plain fetch, no validation, no retries, no rate control.
 *
 * Used in-process by the idle-cycle case and as a process of its own by the first-sync case:
 *   node dist-bench/bench/lib/reference-client.js --url URL --db FILE [--now-ms MS]
 * prints the cycle's counts as JSON.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';

const PARTIAL_STATES = ['accepted', 'completed', 'canceled'] as const;
const HOUR_MS = 3_600_000;

/** What one cycle did. */
export interface ReferenceCycle {
  listCalls: number;
  detailCalls: number;
  /** Rows upserted: details fetched plus awaiting records. */
  upserts: number;
}

export interface ReferenceOptions {
  /** The service's address (auth, hub and base alike, as the simulator serves them). */
  url: string;
  /** Its SQLite file. */
  dbPath: string;
  clientId?: string;
  clientSecret?: string;
  /** The window: 72 h back and 336 h ahead, as the daemon's defaults. */
  pastHours?: number;
  futureHours?: number;
  concurrency?: number;
  /** Now, for the window (the bench's simulator lives at a fixed date). */
  now?: () => number;
}

export interface ReferenceClient {
  cycle(): Promise<ReferenceCycle>;
  /** Rows in its table. */
  count(): number;
  close(): void;
}

export function createReferenceClient(options: ReferenceOptions): ReferenceClient {
  const {
    url,
    clientId = 'demo-client',
    clientSecret = 'demo-secret',
    pastHours = 72,
    futureHours = 336,
    concurrency = 8,
    now = Date.now,
  } = options;
  const db = new Database(options.dbPath);
  db.pragma('journal_mode = WAL');
  db.exec(`CREATE TABLE IF NOT EXISTS requests (
    request_id TEXT PRIMARY KEY,
    last_updated TEXT,
    raw_json TEXT NOT NULL
  )`);
  const upsert = db.prepare(
    `INSERT INTO requests (request_id, last_updated, raw_json) VALUES (?, ?, ?)
     ON CONFLICT (request_id) DO UPDATE SET last_updated = excluded.last_updated,
       raw_json = excluded.raw_json`,
  );
  const upsertPage = db.transaction((rows: Record<string, unknown>[]) => {
    for (const row of rows) {
      upsert.run(
        String(row.request_id),
        (row.last_updated_timestamp_utc as string | undefined) ?? null,
        JSON.stringify(row),
      );
    }
  });
  const storedTimes = db.prepare('SELECT request_id, last_updated FROM requests');

  let token: { value: string; expiresAt: number } | undefined;
  const getToken = async (): Promise<string> => {
    if (token && token.expiresAt > Date.now() + 60_000) return token.value;
    const response = await fetch(`${url}/v2.0/oauth2/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      }),
    });
    if (!response.ok) throw new Error(`token: ${response.status}`);
    const body = (await response.json()) as { access_token: string; expires_in: number };
    token = { value: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 };
    return token.value;
  };

  return {
    async cycle() {
      const counts: ReferenceCycle = { listCalls: 0, detailCalls: 0, upserts: 0 };
      const headers = { authorization: `Bearer ${await getToken()}` };
      const get = async (path: string): Promise<unknown> => {
        const response = await fetch(`${url}${path}`, { headers });
        if (!response.ok) throw new Error(`GET ${path}: ${response.status}`);
        return response.json();
      };
      const t = now();
      const window = `date__gte=${Math.floor((t - pastHours * HOUR_MS) / 1000)}&date__lte=${Math.ceil((t + futureHours * HOUR_MS) / 1000)}`;

      const stored = new Map(
        (storedTimes.all() as { request_id: string; last_updated: string | null }[]).map((r) => [
          r.request_id,
          r.last_updated,
        ]),
      );
      const changed: { id: string; lastUpdated: string }[] = [];
      for (const state of PARTIAL_STATES) {
        const items = (await get(`/openapi/v1.0/requests/?${window}&request__state=${state}`)) as {
          id: string;
          last_updated_timestamp_utc: string;
        }[];
        counts.listCalls += 1;
        for (const item of items) {
          if (stored.get(item.id) !== item.last_updated_timestamp_utc)
            changed.push({ id: item.id, lastUpdated: item.last_updated_timestamp_utc });
        }
      }

      let next = 0;
      const worker = async () => {
        while (next < changed.length) {
          const { id, lastUpdated } = changed[next++]!;
          let detail: unknown;
          try {
            detail = await get(`/openapi/v1.0/requests/${encodeURIComponent(id)}/`);
          } catch (error) {
            // Gone from us since it was listed: nothing to store.
            if ((error as Error).message.endsWith(': 403')) continue;
            throw error;
          } finally {
            counts.detailCalls += 1;
          }
          upsert.run(id, lastUpdated, JSON.stringify(detail));
          counts.upserts += 1;
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));

      for (let page = 1, pages = 1; page <= pages; page += 1) {
        const body = (await get(
          `/openapi/v1.0/request-details/?${window}&request__state=awaiting&page=${page}`,
        )) as { pages: number; results: Record<string, unknown>[] };
        counts.listCalls += 1;
        pages = body.pages;
        upsertPage(body.results);
        counts.upserts += body.results.length;
      }
      return counts;
    },
    count: () => (db.prepare('SELECT count(*) AS n FROM requests').get() as { n: number }).n,
    close: () => db.close(),
  };
}

// As a process of its own: one cycle, its counts on stdout.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      db: { type: 'string' },
      'now-ms': { type: 'string' },
    },
  });
  if (!values.url || !values.db) throw new Error('usage: reference-client --url URL --db FILE');
  const nowMs = values['now-ms'] ? Number(values['now-ms']) : undefined;
  const client = createReferenceClient({
    url: values.url,
    dbPath: values.db,
    ...(nowMs !== undefined && { now: () => nowMs }),
  });
  try {
    const counts = await client.cycle();
    process.stdout.write(`${JSON.stringify({ ...counts, stored: client.count() })}\n`);
  } finally {
    client.close();
  }
}
