import { knownSchemaVersion, schemaVersion, type MirrorDb } from '../db/open.js';
import { readFeedLag, type FeedSinkLag } from '../db/store/feed-cursor-store.js';
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
import {
  effectiveSilenceMinutes,
  readDaemonSettings,
  type IntakeSettings,
  type RecordedIntakeSettings,
} from './intake-settings.js';
import {
  intakeMode,
  isPollingEffective,
  NO_INTAKE_HINT,
  readPollingRetiredAt,
  type IntakeMode,
} from './mode.js';

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
  /** How data comes in: polling+webhooks, webhooks-only, polling-only, or none. */
  mode: IntakeMode;
  /** False when nothing can bring data in (mode none): status exits 1, /readyz answers 503. */
  has_intake: boolean;
  /**
   * Whose settings judged mode, freshness and silence: the running daemon's, as it recorded them
   * at start (`daemon`), or this command's environment when no daemon has recorded any (`caller`).
   */
  settings_source: 'daemon' | 'caller';
  /** The settings the daemon recorded at its last start, or null. */
  daemon_settings: RecordedIntakeSettings | null;
  /** Why status exits 1, one sentence each; empty when it exits 0. */
  problems: string[];
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
  /** The change feed's sinks the daemon publishes to, and how far behind each is. */
  feed_sinks: FeedSinkLag[];
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
  /** TRANSPORT_WEBHOOK_SILENCE_MINUTES (unset: the default for the mode) and _HOURS. */
  silence?: { minutes?: number | undefined; hours: readonly [number, number] };
  /** How many recent runs to list (default 5). */
  runs?: number;
  /** The feed sinks the caller's settings set up (their cursor names). */
  feedSinks?: readonly string[];
}

/**
 * Reads the status report. Never writes. Mode, freshness and silence are judged by the settings
 * the daemon recorded at start when there are any, else by the caller's: a shell whose
 * environment lacks the unit's settings still sees what the daemon sees. With polling off or
 * retired, freshness is still reported but the mirror is not called stale: webhooks alone feed it
 * and no cycle is expected; silence is watched instead.
 */
export async function readStatus(input: StatusInput): Promise<StatusReport> {
  const { db } = input;
  const facts = await readMirrorFacts(db);
  const retiredAt = await readPollingRetiredAt(db);
  const recorded = await readDaemonSettings(db);
  const settings: IntakeSettings = recorded ?? callerSettings(input);
  const isPolling = isPollingEffective(settings.poll_mode, retiredAt);
  const freshness = assessFreshness({
    lastSuccessAt: await readLastSuccessAt(db),
    nowMs: input.nowMs,
    pollCron: settings.poll_cron,
    staleAfterCycles: settings.stale_after_cycles,
  });
  const bytes = await databaseSize(db);
  const outbox = facts.outbox;
  const available = Object.values(facts.requestsByState).reduce((sum, n) => sum + n, 0);
  const mode = intakeMode({
    pollMode: settings.poll_mode,
    hasWebhooks: settings.has_webhook_receiver,
    retiredAt,
  });
  const intakeGaps = await readIntakeGapsReport(db);
  const silence = await readWebhookSilence(db, {
    minutes: settings.has_webhook_receiver
      ? effectiveSilenceMinutes(settings.webhook_silence_minutes, isPolling)
      : 0,
    hours: settings.webhook_silence_hours,
    nowMs: input.nowMs,
    sinceMs: recorded ? Date.parse(recorded.recorded_at) : undefined,
  });
  const isStale = isPolling && freshness.isStale;
  return {
    generated_at: isoFromMs(input.nowMs),
    database_path: db.location,
    database_bytes: bytes.database,
    wal_bytes: bytes.wal,
    schema_version: await schemaVersion(db),
    known_schema_version: knownSchemaVersion(db),
    is_polling_on: isPolling,
    mode,
    has_intake: mode !== 'none',
    settings_source: recorded ? 'daemon' : 'caller',
    daemon_settings: recorded,
    problems: statusProblems({ mode, isStale, freshness, intakeGaps, silence }),
    polling_retired_at: retiredAt,
    last_success_at: freshness.lastSuccessAt,
    freshness_seconds: freshness.freshnessSeconds,
    poll_interval_seconds: freshness.pollIntervalSeconds,
    stale_after_seconds: freshness.staleAfterSeconds,
    is_stale: isStale,
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
    intake_gaps: intakeGaps,
    webhook_silence: silence,
    cluster: await readCluster(db, input.nowMs),
    feed_sinks: await readFeedLag(db, settings.feed_sinks, input.nowMs),
  };
}

/** The caller's own settings, for a database no daemon has recorded its settings in. */
function callerSettings(input: StatusInput): IntakeSettings {
  return {
    poll_mode: input.pollMode ?? (input.isPollingOn ? 'on' : 'off'),
    poll_cron: input.pollCron,
    stale_after_cycles: input.staleAfterCycles,
    has_webhook_receiver: input.hasWebhooks ?? false,
    webhook_silence_minutes: input.silence?.minutes ?? null,
    webhook_silence_hours: [input.silence?.hours[0] ?? 0, input.silence?.hours[1] ?? 24],
    feed_sinks: [...(input.feedSinks ?? [])],
  };
}

/** Why status exits 1: each a sentence an operator can act on. Pure. */
export function statusProblems({
  mode,
  isStale,
  freshness,
  intakeGaps,
  silence,
}: {
  mode: IntakeMode;
  isStale: boolean;
  freshness: { lastSuccessAt: string | null; freshnessSeconds: number | null };
  intakeGaps: IntakeGapsReport;
  silence: WebhookSilenceReport;
}): string[] {
  const problems: string[] = [];
  if (mode === 'none')
    problems.push(
      `nothing can bring data in: polling is off or retired and no webhook receiver is configured; ${NO_INTAKE_HINT}`,
    );
  if (isStale)
    problems.push(
      freshness.lastSuccessAt === null
        ? 'no poll cycle has succeeded yet'
        : `the last successful poll cycle is ${freshness.freshnessSeconds} s old`,
    );
  if (intakeGaps.unreviewed > 0)
    problems.push(
      `${intakeGaps.unreviewed} intake gap(s) longer than the service's retries not yet reviewed (transport-sync gaps --ack)`,
    );
  if (silence.is_silent)
    problems.push(
      `no webhook delivery for ${silence.silence_minutes} min or more (last ${silence.last_delivery_at ?? 'never'})`,
    );
  return problems;
}

async function lastRuns(db: MirrorDb, limit: number): Promise<StatusRun[]> {
  const rows = await readRecentRuns(db, limit);
  return rows.map(({ run_id, kind, status, started_at, finished_at, ...counts }) => {
    const ms = finished_at ? Date.parse(finished_at) - Date.parse(started_at) : Number.NaN;
    const duration_seconds = Number.isFinite(ms) ? ms / 1000 : null;
    return { run_id, kind, status, started_at, finished_at, duration_seconds, ...counts };
  });
}
