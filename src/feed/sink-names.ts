import type { Config } from '../config/index.js';

/**
 * The cursor names of the sinks `config` sets up: retention keeps every change one of them has
 * not acknowledged, and status and /metrics show how far behind each is. A module of its own,
 * without the sinks' libraries, for the commands that only need the names.
 */
export function feedSinkNames(config: Pick<Config, 'feedWebhookUrl'>): string[] {
  return config.feedWebhookUrl ? ['webhook'] : [];
}
