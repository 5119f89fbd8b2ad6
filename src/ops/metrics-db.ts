import { Counter, Gauge, type Registry } from 'prom-client';
import type { MirrorDb } from '../db/open.js';
import { readFeedLag, type FeedSinkLag } from '../db/store/feed-cursor-store.js';
import { countIntakeGaps } from '../db/store/intake-gap-store.js';
import { databaseSize, readMirrorFacts, type MirrorFacts } from './facts.js';
import { readLastSuccessAt } from './freshness.js';
import { readWebhookSilence, type WebhookSilenceReport } from './intake.js';
import { effectiveSilenceMinutes } from './intake-settings.js';
import { INTAKE_MODES, intakeMode, isPollingEffective, readPollingRetiredAt } from './mode.js';

/** Every gauge of one scrape reads the same snapshot; a second scrape within this re-reads. */
const SNAPSHOT_MS = 1000;

interface Snapshot {
  facts: MirrorFacts;
  retiredAt: string | null;
  gaps: { unreviewed: number; alarmed: number; quiet: number };
  silence: WebhookSilenceReport;
  lastSuccessMs: number | null;
  bytes: { database: number; wal: number };
  feed: FeedSinkLag[];
}

/**
 * Registers the gauges read from the database at scrape time: requests by state, unavailable,
 * quarantine size, pending webhook events, the outbox, freshness and the file size. Read at
 * scrape rather than kept up to date by the writers, so they are right whichever path (poll,
 * webhook, an operator's SQL) changed the rows. One snapshot serves every gauge of a scrape.
 */
export function registerDbGauges({
  registry,
  db,
  now = Date.now,
  pollMode = 'on',
  hasWebhooks = false,
  silence = { hours: [0, 24] },
  feedSinks = [],
}: {
  registry: Registry;
  db: MirrorDb;
  now?: () => number;
  /** TRANSPORT_POLL, and whether a receiver runs: with sync_state, they give the mode. */
  pollMode?: 'auto' | 'on' | 'off';
  hasWebhooks?: boolean;
  /** TRANSPORT_WEBHOOK_SILENCE_MINUTES (unset: the default for the mode) and _HOURS. */
  silence?: { minutes?: number | undefined; hours: readonly [number, number] };
  /** The change feed's configured sinks (their cursor names). */
  feedSinks?: readonly string[];
}): void {
  // The silence watch begins with this daemon: a receiver just started has heard nothing yet.
  const watchedSinceMs = now();
  let cached: { at: number; value: Promise<Snapshot> } | undefined;
  const readSnapshot = async (at: number): Promise<Snapshot> => {
    const last = await readLastSuccessAt(db);
    const parsed = last === null ? Number.NaN : Date.parse(last);
    const retiredAt = await readPollingRetiredAt(db);
    // Silence is watched only where a receiver runs; unset, by default on webhooks alone.
    const minutes = hasWebhooks
      ? effectiveSilenceMinutes(silence.minutes, isPollingEffective(pollMode, retiredAt))
      : 0;
    return {
      facts: await readMirrorFacts(db),
      retiredAt,
      gaps: await countIntakeGaps(db),
      silence: await readWebhookSilence(db, {
        minutes,
        hours: silence.hours,
        nowMs: at,
        sinceMs: watchedSinceMs,
      }),
      lastSuccessMs: Number.isFinite(parsed) ? parsed : null,
      bytes: await databaseSize(db),
      feed: await readFeedLag(db, feedSinks, at),
    };
  };
  // The gauges of one scrape are collected together: they share one read (a promise).
  const snapshot = (): Promise<Snapshot> => {
    const at = now();
    if (cached && at - cached.at < SNAPSHOT_MS && at >= cached.at) return cached.value;
    const value = readSnapshot(at);
    cached = { at, value };
    value.catch(() => (cached = undefined));
    return value;
  };
  const registers = [registry];

  new Gauge({
    name: 'transport_sync_requests',
    help: 'Available requests in the mirror by list state.',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const { facts } = await snapshot();
      this.reset();
      for (const [state, n] of Object.entries(facts.requestsByState)) this.set({ state }, n);
    },
  });
  const simple = (name: string, help: string, read: (s: Snapshot) => number | null) =>
    new Gauge({
      name,
      help,
      registers,
      async collect() {
        const value = read(await snapshot());
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
  new Gauge({
    name: 'transport_sync_mode',
    help: 'How data comes in: 1 for the current mode (polling+webhooks, webhooks-only, polling-only, or none: nothing can bring data in).',
    labelNames: ['mode'] as const,
    registers,
    async collect() {
      const { retiredAt } = await snapshot();
      const current = intakeMode({ pollMode, hasWebhooks, retiredAt });
      for (const mode of INTAKE_MODES) this.set({ mode }, mode === current ? 1 : 0);
    },
  });
  simple(
    'transport_sync_intake_gaps_unreviewed',
    'Intake gaps longer than the service retries (events may be lost) not yet acknowledged with transport-sync gaps --ack.',
    (s) => s.gaps.unreviewed,
  );
  new Gauge({
    name: 'transport_sync_intake_gaps',
    help: 'Intake gaps recorded, by whether they were longer than the service retries.',
    labelNames: ['alarmed'] as const,
    registers,
    async collect() {
      const { gaps } = await snapshot();
      this.set({ alarmed: 'true' }, gaps.alarmed);
      this.set({ alarmed: 'false' }, gaps.quiet);
    },
  });
  simple(
    'transport_sync_webhook_silent',
    '1 while no webhook arrived for TRANSPORT_WEBHOOK_SILENCE_MINUTES (unset: 180 on webhooks alone) within TRANSPORT_WEBHOOK_SILENCE_HOURS.',
    (s) => (s.silence.is_silent ? 1 : 0),
  );
  simple(
    'transport_sync_last_webhook_timestamp_seconds',
    'When the last webhook delivery was stored (Unix seconds).',
    (s) =>
      s.silence.last_delivery_at === null ? null : Date.parse(s.silence.last_delivery_at) / 1000,
  );
  new Gauge({
    name: 'transport_sync_schema_drift',
    help: 'Members seen differing from the documented shape (rows of schema_drift), by problem: missing, type, unknown.',
    labelNames: ['problem'] as const,
    registers,
    async collect() {
      const drift = (await snapshot()).facts.schemaDrift;
      for (const problem of ['missing', 'type', 'unknown'] as const)
        this.set({ problem }, drift[problem]);
    },
  });
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
  registerCheckpointMetrics(db, registers);
  const feedGauge = (name: string, help: string, read: (lag: FeedSinkLag) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['sink'] as const,
      registers,
      async collect() {
        for (const lag of (await snapshot()).feed) this.set({ sink: lag.sink }, read(lag));
      },
    });
  feedGauge(
    'transport_sync_feed_lag_changes',
    'Changes of the change feed committed but not yet acknowledged by the sink.',
    (lag) => lag.lag_changes,
  );
  feedGauge(
    'transport_sync_feed_lag_seconds',
    'Age of the oldest change the sink has not yet acknowledged (0 when it has them all).',
    (lag) => lag.lag_seconds,
  );
  new Gauge({
    name: 'transport_sync_outbox_rows',
    help: 'Outbox rows waiting to be sent (pending) or given up on (failed), by kind.',
    labelNames: ['kind', 'status'] as const,
    registers,
    async collect() {
      const { outbox } = (await snapshot()).facts;
      for (const kind of ['locations', 'actions'] as const) {
        this.set({ kind, status: 'pending' }, outbox[kind].pending);
        this.set({ kind, status: 'failed' }, outbox[kind].failed);
      }
    },
  });
}

/**
 * A SQLite mirror's WAL checkpoint thread (src/db/sqlite/checkpointer.ts), read from the daemon's
 * own connection; none on PostgreSQL. A stopped thread loses nothing (the writer checkpoints in
 * its commits), but the WAL then grows to WAL_PAGES_BEFORE_WRITER_CHECKPOINTS pages before each
 * checkpoint, and the commit that runs it waits for the copy.
 */
function registerCheckpointMetrics(db: MirrorDb, registers: Registry[]): void {
  if (db.engine !== 'sqlite') return;
  // A read-only or in-memory database has no thread: it reads as one that never started.
  const checkpoints = db.checkpoints ?? { completed: 0, failures: 0, hasStopped: false };
  const counter = (name: string, help: string, read: () => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  counter(
    'transport_sync_sqlite_checkpoints_total',
    "WAL checkpoints run by the SQLite checkpoint thread, off the writer's commits.",
    () => checkpoints.completed,
  );
  counter(
    'transport_sync_sqlite_checkpoint_failures_total',
    "WAL checkpoints of the SQLite checkpoint thread that failed, and the thread's own failure.",
    () => checkpoints.failures,
  );
  new Gauge({
    name: 'transport_sync_sqlite_checkpoint_thread_stopped',
    help: '1 when the SQLite checkpoint thread stopped on a failure: the writer checkpoints in its commits instead.',
    registers,
    collect() {
      this.set(checkpoints.hasStopped ? 1 : 0);
    },
  });
}
