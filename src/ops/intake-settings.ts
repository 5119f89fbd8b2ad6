import type { Config } from '../config/index.js';
import type { Connection } from '../db/sql.js';
import { readSyncState } from '../db/store/sync-state-store.js';
import { feedSinkNames } from '../feed/sink-names.js';

/** Key in sync_state of the settings the running daemon judges its intake by. */
export const DAEMON_SETTINGS_KEY = 'daemon_settings';

/**
 * How silent a receiver may be, in minutes, when TRANSPORT_WEBHOOK_SILENCE_MINUTES is unset and
 * webhooks are the only intake. The service sends an event for every change to a provider's
 * requests, so a working day brings deliveries far more often than this; three hours without one
 * more likely means the service stopped sending (an expired registration, a changed URL) than a
 * quiet spell, and is still found within a shift. While polling runs, polling is the safety net and
 * silence is not watched unless asked for.
 */
export const DEFAULT_WEBHOOKS_ONLY_SILENCE_MINUTES = 180;

/**
 * The settings that decide how intake is judged: the mode, the schedule and its staleness, the
 * receiver and its silence watch. The daemon records them at start, so that `status` run from a
 * shell (whose environment may differ from the unit's) judges the mirror as the daemon does.
 * Keys are a public interface (`status --json`, key `daemon_settings`): add, never rename.
 */
export interface IntakeSettings {
  poll_mode: 'auto' | 'on' | 'off';
  poll_cron: string;
  stale_after_cycles: number;
  has_webhook_receiver: boolean;
  /** TRANSPORT_WEBHOOK_SILENCE_MINUTES as set; null when unset (the default applies). */
  webhook_silence_minutes: number | null;
  webhook_silence_hours: [number, number];
  /** The change feed's sinks the daemon publishes to (their cursor names); [] when none. */
  feed_sinks: string[];
}

/** What the daemon recorded, and when. */
export interface RecordedIntakeSettings extends IntakeSettings {
  recorded_at: string;
}

/** The intake settings of a configuration (the daemon's, or the caller's). */
export function intakeSettingsOf(
  config: Pick<
    Config,
    | 'pollMode'
    | 'pollCron'
    | 'staleAfterCycles'
    | 'webhookListen'
    | 'webhookSilenceMinutes'
    | 'webhookSilenceHours'
    | 'feedWebhookUrl'
    | 'feedPgChannel'
    | 'dbPath'
  >,
): IntakeSettings {
  return {
    poll_mode: config.pollMode,
    poll_cron: config.pollCron,
    stale_after_cycles: config.staleAfterCycles,
    has_webhook_receiver: Boolean(config.webhookListen),
    webhook_silence_minutes: config.webhookSilenceMinutes ?? null,
    webhook_silence_hours: [config.webhookSilenceHours[0], config.webhookSilenceHours[1]],
    feed_sinks: feedSinkNames(config),
  };
}

/** The silence watch in minutes (0: off): as set, else the default for webhooks alone. */
export function effectiveSilenceMinutes(
  configured: number | null | undefined,
  isPolling: boolean,
): number {
  if (configured !== null && configured !== undefined) return configured;
  return isPolling ? 0 : DEFAULT_WEBHOOKS_ONLY_SILENCE_MINUTES;
}

/** The settings the daemon recorded, or null (none yet, an older daemon, or a foreign value). */
export async function readDaemonSettings(db: Connection): Promise<RecordedIntakeSettings | null> {
  const entry = await readSyncState(db, DAEMON_SETTINGS_KEY);
  if (!entry) return null;
  try {
    const value = JSON.parse(entry.value) as Partial<IntakeSettings>;
    if (!isIntakeSettings(value)) return null;
    // Recorded before the change feed: none.
    return { ...value, feed_sinks: value.feed_sinks ?? [], recorded_at: entry.updated_at };
  } catch {
    return null;
  }
}

function isIntakeSettings(
  value: Partial<IntakeSettings>,
): value is Omit<IntakeSettings, 'feed_sinks'> & { feed_sinks?: string[] } {
  return (
    typeof value === 'object' &&
    value !== null &&
    ['auto', 'on', 'off'].includes(value.poll_mode as string) &&
    typeof value.poll_cron === 'string' &&
    typeof value.stale_after_cycles === 'number' &&
    typeof value.has_webhook_receiver === 'boolean' &&
    (value.webhook_silence_minutes === null || typeof value.webhook_silence_minutes === 'number') &&
    Array.isArray(value.webhook_silence_hours) &&
    value.webhook_silence_hours.length === 2
  );
}
