import { knownSchemaVersion, schemaVersion, type MirrorDb } from '../db/open.js';
import { readRecentRuns, type RecentRun } from '../db/store/run-store.js';
import { isoFromMs } from '../time.js';
import { readCluster, type ClusterReport } from './cluster.js';
import { databaseSize, readMirrorFacts, type SchemaDriftFacts } from './facts.js';
import { assessFreshness, readLastSuccessAt } from './freshness.js';
import {
  readIntakeGapsReport,
  readWebhookSilence,
  type IntakeGapsReport,
  type WebhookSilenceReport,
} from './intake.js';
import { intakeMode, isPollingEffective, readPollingRetiredAt, type IntakeMode } from './mode.js';

/** One sync_runs row as `status` shows it: the row, and how long the run took. */
export type StatusRun = RecentRun & { duration_seconds: number | null };

/**
 * The `status --json` document. Keys are a public interface for scripts and monitoring: stable,
 * snake_case; add keys freely, never rename one.
 */
export interface StatusReport {
  generated_at: string;
  database_path: string;
  database_bytes: number;
  wal_bytes: number;
  schema_version: number;
  known_schema_version: number;
  is_polling_on: boolean;
  /** How data comes in: polling+webhooks, webhooks-only or polling-only. */
  mode: IntakeMode;
  /** When the daemon found the service's polling API retired (TRANSPORT_POLL=auto), or null. */
  polling_retired_at: string | null;
  last_success_at: string | null;
  freshness_seconds: number | null;
  poll_interval_seconds: number;
  stale_after_seconds: number;
  is_stale: boolean;
  last_runs: StatusRun[];
  requests_total: number;
  requests_by_state: Record<string, number>;
  unavailable: number;
  quarantined: number;
  /** Members seen differing from the documented shape (rows of schema_drift, by problem). */
  schema_drift: SchemaDriftFacts;
  webhook_events: { received: number; pending: number; failed: number };
  outbox: { pending: number; failed: number };
  /** Stretches the receiver could not accept or store; status exits 1 while one is unreviewed. */
  intake_gaps: IntakeGapsReport;
  webhook_silence: WebhookSilenceReport;
  /** The daemons on this database and the one that leads (on SQLite there is one). */
  cluster: ClusterReport;
}

/** What `readStatus` needs: an open (read-only is enough) database and the schedule settings. */
export interface StatusInput {
  db: MirrorDb;
  nowMs: number;
  pollCron: string;
  staleAfterCycles: number;
  isPollingOn: boolean;
  /** TRANSPORT_POLL (default: on when isPollingOn, else off). */
  pollMode?: 'auto' | 'on' | 'off';
  /** A webhook receiver is configured. */
  hasWebhooks?: boolean;
  /** TRANSPORT_WEBHOOK_SILENCE_MINUTES and _HOURS (default: not watched). */
  silence?: { minutes: number; hours: readonly [number, number] };
  /** How many recent runs to list (default 5). */
  runs?: number;
}

/**
 * Reads the status report. Never writes. With polling off, freshness is still reported but the
 * mirror is not called stale: webhooks alone feed it and no cycle is expected.
 */
export async function readStatus(input: StatusInput): Promise<StatusReport> {
  const { db } = input;
  const facts = await readMirrorFacts(db);
  const retiredAt = await readPollingRetiredAt(db);
  const pollMode = input.pollMode ?? (input.isPollingOn ? 'on' : 'off');
  const isPolling = isPollingEffective(pollMode, retiredAt);
  const freshness = assessFreshness({
    lastSuccessAt: await readLastSuccessAt(db),
    nowMs: input.nowMs,
    pollCron: input.pollCron,
    staleAfterCycles: input.staleAfterCycles,
  });
  const bytes = await databaseSize(db);
  const outbox = facts.outbox;
  const available = Object.values(facts.requestsByState).reduce((sum, n) => sum + n, 0);
  return {
    generated_at: isoFromMs(input.nowMs),
    database_path: db.location,
    database_bytes: bytes.database,
    wal_bytes: bytes.wal,
    schema_version: await schemaVersion(db),
    known_schema_version: knownSchemaVersion(db),
    is_polling_on: isPolling,
    mode: intakeMode({ pollMode, hasWebhooks: input.hasWebhooks ?? false, retiredAt }),
    polling_retired_at: retiredAt,
    last_success_at: freshness.lastSuccessAt,
    freshness_seconds: freshness.freshnessSeconds,
    poll_interval_seconds: freshness.pollIntervalSeconds,
    stale_after_seconds: freshness.staleAfterSeconds,
    is_stale: isPolling && freshness.isStale,
    last_runs: await lastRuns(db, input.runs ?? 5),
    requests_total: available + facts.unavailable,
    requests_by_state: facts.requestsByState,
    unavailable: facts.unavailable,
    quarantined: facts.quarantined,
    schema_drift: facts.schemaDrift,
    webhook_events: facts.webhookEvents,
    outbox: {
      pending: outbox.locations.pending + outbox.actions.pending,
      failed: outbox.locations.failed + outbox.actions.failed,
    },
    intake_gaps: await readIntakeGapsReport(db),
    webhook_silence: await readWebhookSilence(db, {
      minutes: input.silence?.minutes ?? 0,
      hours: input.silence?.hours ?? [0, 24],
      nowMs: input.nowMs,
    }),
    cluster: await readCluster(db, input.nowMs),
  };
}

async function lastRuns(db: MirrorDb, limit: number): Promise<StatusRun[]> {
  const rows = await readRecentRuns(db, limit);
  return rows.map(({ run_id, kind, status, started_at, finished_at, ...counts }) => {
    const ms = finished_at ? Date.parse(finished_at) - Date.parse(started_at) : Number.NaN;
    const duration_seconds = Number.isFinite(ms) ? ms / 1000 : null;
    return { run_id, kind, status, started_at, finished_at, duration_seconds, ...counts };
  });
}
