import type Database from 'better-sqlite3';
import { Gauge, type Registry } from 'prom-client';
import { databaseBytes, readMirrorFacts, type MirrorFacts } from './facts.js';
import { readLastSuccessAt } from './freshness.js';

/** Every gauge of one scrape reads the same snapshot; a second scrape within this re-reads. */
const SNAPSHOT_MS = 1000;

interface Snapshot {
  facts: MirrorFacts;
  lastSuccessMs: number | null;
  bytes: { database: number; wal: number };
}

/**
 * Registers the gauges read from the database at scrape time: requests by state, unavailable,
 * quarantine size, pending webhook events, the outbox, freshness and the file size. Read at
 * scrape rather than kept up to date by the writers, so they are right whichever path (poll,
 * webhook, an operator's SQL) changed the rows. One snapshot serves every gauge of a scrape.
 */
export function registerDbGauges({
  registry,
  sqlite,
  dbPath,
  now = Date.now,
}: {
  registry: Registry;
  sqlite: Database.Database;
  dbPath: string;
  now?: () => number;
}): void {
  let cached: { at: number; value: Snapshot } | undefined;
  const snapshot = (): Snapshot => {
    const at = now();
    if (cached && at - cached.at < SNAPSHOT_MS && at >= cached.at) return cached.value;
    const last = readLastSuccessAt(sqlite);
    const parsed = last === null ? Number.NaN : Date.parse(last);
    const value = {
      facts: readMirrorFacts(sqlite),
      lastSuccessMs: Number.isFinite(parsed) ? parsed : null,
      bytes: databaseBytes(dbPath),
    };
    cached = { at, value };
    return value;
  };
  const registers = [registry];

  new Gauge({
    name: 'transport_sync_requests',
    help: 'Available requests in the mirror by list state.',
    labelNames: ['state'] as const,
    registers,
    collect() {
      this.reset();
      for (const [state, n] of Object.entries(snapshot().facts.requestsByState))
        this.set({ state }, n);
    },
  });
  const simple = (name: string, help: string, read: (s: Snapshot) => number | null) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const value = read(snapshot());
        // No sample rather than a made-up number: absent() alerts on a mirror never synced.
        if (value === null) this.remove();
        else this.set(value);
      },
    });
  simple(
    'transport_sync_requests_unavailable',
    'Requests the service stopped showing us.',
    (s) => s.facts.unavailable,
  );
  simple(
    'transport_sync_quarantined_records',
    'Records kept apart because they failed validation.',
    (s) => s.facts.quarantined,
  );
  simple(
    'transport_sync_webhook_events_pending',
    'Webhook events stored but not yet applied.',
    (s) => s.facts.webhookEvents.pending,
  );
  simple(
    'transport_sync_last_success_timestamp_seconds',
    'Unix time of the end of the last poll cycle that completed every list call.',
    (s) => (s.lastSuccessMs === null ? null : s.lastSuccessMs / 1000),
  );
  simple('transport_sync_freshness_seconds', 'Age of the last successful poll cycle.', (s) =>
    s.lastSuccessMs === null ? null : Math.max(0, now() - s.lastSuccessMs) / 1000,
  );
  simple(
    'transport_sync_database_bytes',
    'Size of the SQLite database file and its write-ahead log.',
    (s) => s.bytes.database + s.bytes.wal,
  );
  new Gauge({
    name: 'transport_sync_outbox_rows',
    help: 'Outbox rows waiting to be sent (pending) or given up on (failed), by kind.',
    labelNames: ['kind', 'status'] as const,
    registers,
    collect() {
      const { outbox } = snapshot().facts;
      for (const kind of ['locations', 'actions'] as const) {
        this.set({ kind, status: 'pending' }, outbox[kind].pending);
        this.set({ kind, status: 'failed' }, outbox[kind].failed);
      }
    },
  });
}
