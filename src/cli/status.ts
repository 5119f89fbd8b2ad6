import { loadConfig } from '../config/index.js';
import { parseCronPattern } from '../daemon/scheduler.js';
import { isPostgresLocation } from '../db/location.js';
import { openForReading, targetOf } from '../db/open.js';
import { feedSinkNames } from '../feed/sink-names.js';
import { readStatus, type StatusReport, type StatusRun } from '../ops/status.js';
import { DB_FLAG, EXIT, parseCommandArgs, parseIntegerFlag, type Command } from './command.js';

/** `transport-sync status`: how fresh the mirror is, and why not; exit 1 when stale. */
export const statusCommand: Command = {
  name: 'status',
  summary:
    'Freshness, mode, last runs, schema drift, intake gaps; exit 1 when stale, silent, unable to receive, or a gap is unreviewed',
  usage: `Usage: transport-sync status [--json] [--runs N] [--db PATH]

Reads the database (read-only, never migrates) and prints the last successful cycle and its
age, the last N runs (default 5) with their counts and errors, requests by state, unavailable
and quarantined counts, webhook events received and pending, the last delivery, the outbox, the
database size and schema version, how data comes in (mode), webhook silence, and the last intake
gaps with the requests at risk from each unreviewed one. --json prints one JSON object with
stable snake_case keys (see docs/operations.md).
Mode, freshness and silence are judged by the settings the daemon recorded when it started
(TRANSPORT_POLL, TRANSPORT_POLL_CRON, TRANSPORT_STALE_AFTER_CYCLES, the webhook receiver and
its silence watch), so a shell sees what the daemon sees; before any daemon has run, by this
command's own settings. The mirror is stale when polling runs and no cycle has succeeded yet, or
the last success is older than TRANSPORT_STALE_AFTER_CYCLES poll intervals.
Exit codes: 0 healthy, 1 stale or never synced, nothing can bring data in (polling off or
retired and no webhook receiver: mode none), webhook silence, an intake gap longer than the
service's retries not yet acknowledged (transport-sync gaps --ack), or no database, 2 bad usage
or configuration.`,
  async run(argv, io) {
    const { values } = parseCommandArgs(argv, {
      ...DB_FLAG,
      json: { type: 'boolean' },
      runs: { type: 'string' },
    });
    const runs = parseIntegerFlag('runs', values.runs, { min: 0, max: 1000, fallback: 5 });
    const config = loadConfig({
      env: io.env,
      needsService: false,
      overrides: { dbPath: values.db },
    });
    const pollCron = parseCronPattern(config.pollCron);
    const db = await openForReading(targetOf(config));
    let report: StatusReport;
    try {
      report = await readStatus({
        db,
        nowMs: Date.now(),
        pollCron,
        staleAfterCycles: config.staleAfterCycles,
        isPollingOn: config.isPollingOn,
        pollMode: config.pollMode,
        hasWebhooks: Boolean(config.webhookListen),
        silence: { minutes: config.webhookSilenceMinutes, hours: config.webhookSilenceHours },
        runs,
        feedSinks: feedSinkNames(config),
      });
    } finally {
      await db.close();
    }
    io.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report));
    return report.problems.length > 0 ? EXIT.failure : EXIT.ok;
  },
};

/** The human form: a headline an operator reads first, then one line per area. */
export function formatStatus(report: StatusReport): string {
  const headline =
    report.mode === 'none'
      ? 'NO INTAKE: nothing can bring data in'
      : !report.is_polling_on
        ? report.polling_retired_at
          ? `webhooks only: the service's polling API is gone since ${report.polling_retired_at}`
          : 'polling off (webhooks only)'
        : report.last_success_at === null
          ? 'STALE: no poll cycle has succeeded yet'
          : report.is_stale
            ? 'STALE'
            : 'fresh';
  const success =
    report.last_success_at === null
      ? 'never'
      : `${report.last_success_at} (${report.freshness_seconds} s ago)`;
  const states = Object.entries(report.requests_by_state)
    .map(([state, n]) => `${state} ${n}`)
    .join(', ');
  const lines = [
    `transport-sync status: ${headline}`,
    `  mode            ${report.mode} (${formatSettingsSource(report)})`,
    `  last success    ${success}; stale after ${report.stale_after_seconds} s (poll interval ${report.poll_interval_seconds} s)`,
    `  requests        ${report.requests_total}${states ? ` (${states})` : ''}, unavailable ${report.unavailable}`,
    `  quarantined     ${report.quarantined}`,
    `  schema drift    ${formatDrift(report)}`,
    `  webhook events  ${report.webhook_events.received} received, ${report.webhook_events.pending} pending, ${report.webhook_events.failed} failed; last delivery ${formatLastDelivery(report)}`,
    `  outbox          ${report.outbox.pending} pending, ${report.outbox.failed} failed`,
    `  database        ${report.database_path} (${formatBytes(report.database_bytes)}${isPostgresLocation(report.database_path) ? '' : `, WAL ${formatBytes(report.wal_bytes)}`}), schema version ${report.schema_version} of ${report.known_schema_version}`,
    `  daemons         ${formatCluster(report)}`,
    ...report.feed_sinks.map(
      (lag) =>
        `  feed ${lag.sink.padEnd(11)}position ${lag.position} of ${lag.last_position}; ${lag.lag_changes} waiting, oldest ${lag.lag_seconds.toFixed(0)} s`,
    ),
  ];
  if (report.webhook_silence.is_silent)
    lines.push(
      `  WEBHOOK SILENCE no delivery for ${report.webhook_silence.silence_minutes} min or more (last ${report.webhook_silence.last_delivery_at ?? 'never'})`,
    );
  if (report.problems.length > 0)
    lines.push('problems:', ...report.problems.map((problem) => `  - ${problem}`));
  lines.push(...formatGaps(report));
  if (report.last_runs.length > 0) lines.push('last runs:', ...report.last_runs.map(formatRun));
  return `${lines.join('\n')}\n`;
}

function formatSettingsSource({ settings_source, daemon_settings }: StatusReport): string {
  return settings_source === 'daemon' && daemon_settings
    ? `as the daemon started at ${daemon_settings.recorded_at} is set`
    : 'no daemon has recorded its settings: judged by this shell';
}

function formatLastDelivery({ webhook_silence: silence, generated_at }: StatusReport): string {
  if (silence.last_delivery_at === null) return 'never';
  const ago = Math.max(0, Date.parse(generated_at) - Date.parse(silence.last_delivery_at));
  return `${silence.last_delivery_at} (${Math.floor(ago / 60_000)} min ago)`;
}

function formatGaps({ intake_gaps: gaps }: StatusReport): string[] {
  if (gaps.last.length === 0) return [];
  const lines = [
    gaps.unreviewed > 0
      ? `intake gaps: ${gaps.unreviewed} UNREVIEWED (events may be lost; check the requests below with the service, then run transport-sync gaps --ack):`
      : 'intake gaps:',
  ];
  for (const gap of gaps.last) {
    const mark = gap.is_alarmed ? (gap.reviewed_at ? 'reviewed' : 'UNREVIEWED') : 'within retries';
    lines.push(
      `  #${gap.gap_id} ${gap.started_at} to ${gap.ended_at} (${gap.seconds.toFixed(0)} s, ${gap.reason}): ${mark}`,
    );
    if (gap.request_ids.length > 0)
      lines.push(`      at risk (${gap.requests_at_risk}): ${gap.request_ids.join(' ')}`);
  }
  return lines;
}

function formatCluster({ cluster }: StatusReport): string {
  if (cluster.members.length === 0) return 'none running';
  const members = cluster.members
    .map((m) => `${m.host} pid ${m.pid}${m.is_leader ? ' (leader)' : ''}`)
    .join(', ');
  const leader = cluster.leader
    ? `leader since ${cluster.leader.since}`
    : 'NO LEADER: nobody polls, applies events or drains the outbox';
  return `${cluster.members.length}: ${members}; ${leader}`;
}

function formatDrift({ schema_drift: drift }: StatusReport): string {
  if (drift.rows === 0) return 'none';
  return (
    `${drift.members} members (${drift.missing} missing, ${drift.type} retyped, ` +
    `${drift.unknown} unknown), last seen ${drift.last_seen_at}; see the schema_drift table`
  );
}

function formatRun(run: StatusRun): string {
  const took = run.duration_seconds === null ? 'running' : `${run.duration_seconds.toFixed(1)} s`;
  const line =
    `  #${run.run_id} ${run.kind} ${run.status} at ${run.started_at} (${took}): ` +
    `${run.requests_seen} seen, ${run.requests_new} new, ${run.requests_changed} changed, ` +
    `${run.requests_unavailable} unavailable, ${run.requests_failed} failed, ` +
    `${run.requests_quarantined} quarantined, ${run.schema_drift} drifted members; ${run.list_calls} list, ${run.detail_calls} detail calls, ` +
    `${run.retries} retries`;
  return run.error ? `${line}\n      error: ${run.error}` : line;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
