import type { Connection } from '../db/sql.js';
import { readSyncState } from '../db/store/sync-state-store.js';

/** Key in sync_state of when the daemon found the polling API retired (TRANSPORT_POLL=auto). */
export const POLLING_RETIRED_KEY = 'polling_retired_at';

/**
 * How data comes in: the public names of `status` (key `mode`) and /metrics. `none`: polling is
 * off or retired and no webhook receiver is configured, so nothing can bring data in.
 */
export type IntakeMode = 'polling+webhooks' | 'webhooks-only' | 'polling-only' | 'none';

/** Every mode, in the order /metrics lists them. */
export const INTAKE_MODES: readonly IntakeMode[] = [
  'polling+webhooks',
  'webhooks-only',
  'polling-only',
  'none',
];

/** What to tell an operator whose daemon can receive nothing. */
export const NO_INTAKE_HINT =
  "set TRANSPORT_WEBHOOK_LISTEN and TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE and register the receiver's URL with the service (docs/webhooks.md); the service retired its v1.0 polling API on 2026-08-12";

/** When the polling API was found retired, or null (also when the table does not exist yet). */
export async function readPollingRetiredAt(db: Connection): Promise<string | null> {
  return (await readSyncState(db, POLLING_RETIRED_KEY))?.value ?? null;
}

/** Whether polling runs: on, or auto while the polling API has not been found retired. */
export function isPollingEffective(
  pollMode: 'auto' | 'on' | 'off',
  retiredAt: string | null,
): boolean {
  return pollMode === 'on' || (pollMode === 'auto' && retiredAt === null);
}

/** The intake mode from the settings and what the daemon found. */
export function intakeMode({
  pollMode,
  hasWebhooks,
  retiredAt,
}: {
  pollMode: 'auto' | 'on' | 'off';
  hasWebhooks: boolean;
  retiredAt: string | null;
}): IntakeMode {
  if (!isPollingEffective(pollMode, retiredAt)) return hasWebhooks ? 'webhooks-only' : 'none';
  return hasWebhooks ? 'polling+webhooks' : 'polling-only';
}
