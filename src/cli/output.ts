import { TransportError } from '../errors.js';
import { EXIT, type CliIo } from './command.js';

/** Codes whose errors are the operator's to fix before anything runs: exit 2. */
const USAGE_CODES = ['cli.', 'config.', 'webhook.no_key', 'webhook.key_', 'webhook.tls_'];

/**
 * Prints an error the way an operator can act on it, `error: ...` then `hint: ...`, and returns
 * the exit code: 2 for usage and configuration, 1 for everything else. Stack traces only for
 * errors that are not ours (a bug), so they can be reported.
 */
export function reportError(error: unknown, io: CliIo, usage?: string): number {
  if (error instanceof TransportError) {
    io.stderr.write(`transport-sync: error: ${error.message}\n`);
    if (error.hint) io.stderr.write(`  hint: ${error.hint}\n`);
    const isUsage = USAGE_CODES.some((prefix) => error.code.startsWith(prefix));
    if (isUsage && error.code === 'cli.usage' && usage) io.stderr.write(`\n${usage}\n`);
    return isUsage ? EXIT.usage : EXIT.failure;
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  io.stderr.write(`transport-sync: unexpected error: ${text}\n`);
  return EXIT.failure;
}
