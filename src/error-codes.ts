import { API_ERROR_CODES } from './api/error-codes.js';
import { CLI_ERROR_CODES } from './cli/error-codes.js';
import { CONFIG_ERROR_CODES } from './config/error-codes.js';
import { DAEMON_ERROR_CODES } from './daemon/error-codes.js';
import { DB_ERROR_CODES } from './db/error-codes.js';
import { OPS_ERROR_CODES } from './ops/error-codes.js';
import { OUTBOX_ERROR_CODES } from './outbox/error-codes.js';
import { SIMULATOR_ERROR_CODES } from './simulator/error-codes.js';
import { WEBHOOKS_ERROR_CODES } from './webhooks/error-codes.js';

/**
 * How an error ends a command: `usage` (exit 2) is the operator's to fix before anything runs
 * (a flag, a setting, a key file); `failure` (exit 1) is everything else.
 */
export type ExitClass = 'usage' | 'failure';

/**
 * Every error code, one catalog per area, merged. A code is `area.reason`, stable once
 * published (logs, status and scripts match on it): add codes, never rename one.
 */
export const ERROR_CODES = {
  ...API_ERROR_CODES,
  ...CLI_ERROR_CODES,
  ...CONFIG_ERROR_CODES,
  ...DAEMON_ERROR_CODES,
  ...DB_ERROR_CODES,
  ...OPS_ERROR_CODES,
  ...OUTBOX_ERROR_CODES,
  ...SIMULATOR_ERROR_CODES,
  ...WEBHOOKS_ERROR_CODES,
} as const satisfies Record<string, ExitClass>;

/** A code from the catalogs; `internal` stands for a thrown value that is not ours. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** An area's prefix, e.g. `api.`: matches every code of that area. */
export type ErrorArea = `${ErrorCode extends `${infer Area}.${string}` ? Area : never}.`;

/** The exit class of `code` (unknown codes, a bug, exit 1). */
export function exitClassOf(code: string): ExitClass {
  return (ERROR_CODES as Record<string, ExitClass>)[code] ?? 'failure';
}
