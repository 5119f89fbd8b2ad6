import type { Config } from '../config/index.js';
import { isPostgresLocation } from '../config/settings.js';

/**
 * The cursor names of the sinks `config` sets up: retention keeps every change one of them has
 * not acknowledged, and status and /metrics show how far behind each is. A module of its own,
 * without the sinks' libraries, for the commands that only need the names.
 */
export function feedSinkNames(
  config: Pick<Config, 'feedWebhookUrl' | 'feedNatsUrl' | 'feedPgChannel' | 'dbPath'>,
): string[] {
  return [
    ...(config.feedWebhookUrl ? ['webhook'] : []),
    ...(config.feedNatsUrl ? ['nats'] : []),
    ...(isNotifyOn(config) ? ['notify'] : []),
  ];
}

/** Whether the daemon sends NOTIFY for the feed: on PostgreSQL, unless the channel is none. */
export function isNotifyOn(config: Pick<Config, 'feedPgChannel' | 'dbPath'>): boolean {
  return isPostgresLocation(config.dbPath) && config.feedPgChannel !== 'none';
}
