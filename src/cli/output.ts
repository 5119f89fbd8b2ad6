import { API_ERROR_CODES } from '../api/error-codes.js';
import { CONFIG_ERROR_CODES } from '../config/error-codes.js';
import { DAEMON_ERROR_CODES } from '../daemon/error-codes.js';
import { SETTINGS } from '../config/settings.js';
import { DB_ERROR_CODES } from '../db/error-codes.js';
import { machineError } from '../db/machine-errors.js';
import type { ErrorCode, ExitClass } from '../error-codes.js';
import { TransportError } from '../errors.js';
import { FEED_ERROR_CODES } from '../feed/error-codes.js';
import { OPS_ERROR_CODES } from '../ops/error-codes.js';
import { OUTBOX_ERROR_CODES } from '../outbox/error-codes.js';
import { SIMULATOR_ERROR_CODES } from '../simulator/error-codes.js';
import { WEBHOOKS_ERROR_CODES } from '../webhooks/error-codes.js';
import { EXIT, type CliIo } from './command.js';
import { CLI_ERROR_CODES } from './error-codes.js';

/**
 * Every area's catalog, merged: the command line is the one layer that sees them all, and the
 * one that turns a code into an exit code. `satisfies` holds it to every code the areas
 * register (src/error-codes.ts), so a catalog left out here fails the typecheck.
 */
export const ERROR_CODES = {
  ...API_ERROR_CODES,
  ...CLI_ERROR_CODES,
  ...CONFIG_ERROR_CODES,
  ...DAEMON_ERROR_CODES,
  ...DB_ERROR_CODES,
  ...FEED_ERROR_CODES,
  ...OPS_ERROR_CODES,
  ...OUTBOX_ERROR_CODES,
  ...SIMULATOR_ERROR_CODES,
  ...WEBHOOKS_ERROR_CODES,
} as const satisfies Record<ErrorCode, ExitClass>;

/** The exit class of `code` (unknown codes, a bug, exit 1). */
export function exitClassOf(code: string): ExitClass {
  return (ERROR_CODES as Record<string, ExitClass>)[code] ?? 'failure';
}

/**
 * Prints an error the way an operator can act on it, `error: ...` then `hint: ...`, and returns
 * the exit code: 2 for usage and configuration, 1 for everything else. A failure of the machine
 * (a read-only or full disk, a damaged file, a database server that refuses) that arrives
 * untranslated is translated here. Stack traces only for errors that are not ours (a bug), so
 * they can be reported, and for every error at LOG_LEVEL=debug or trace.
 */
export function reportError(error: unknown, io: CliIo, usage?: string): number {
  const known = error instanceof TransportError ? error : machineError(error);
  if (known) {
    io.stderr.write(`transport-sync: error: ${known.message}\n`);
    if (known.hint) io.stderr.write(`  hint: ${known.hint}\n`);
    if (isDebugging(io.env)) io.stderr.write(`  code: ${known.code}\n${stackOf(known)}\n`);
    const isUsage = exitClassOf(known.code) === 'usage';
    if (isUsage && known.code === 'cli.usage' && usage) io.stderr.write(`\n${usage}\n`);
    return isUsage ? EXIT.usage : EXIT.failure;
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  io.stderr.write(`transport-sync: unexpected error: ${text}\n`);
  return EXIT.failure;
}

/** Whether LOG_LEVEL asks for debugging detail (an invalid value does not). */
function isDebugging(env: NodeJS.ProcessEnv | undefined): boolean {
  const level = env?.[SETTINGS.logLevel.env]?.trim().toLowerCase();
  return level === 'debug' || level === 'trace';
}

/** The error's stack and its causes', for a report. */
function stackOf(error: Error): string {
  const parts: string[] = [];
  let at: unknown = error;
  for (let depth = 0; at !== undefined && depth < 5; depth += 1) {
    parts.push(
      `${depth === 0 ? '' : 'caused by: '}${at instanceof Error ? (at.stack ?? at.message) : String(at)}`,
    );
    at = at instanceof Error ? at.cause : undefined;
  }
  return parts.join('\n');
}
