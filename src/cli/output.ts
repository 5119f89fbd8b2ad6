import { exitClassOf } from '../error-codes.js';
import { TransportError } from '../errors.js';
import { EXIT, type CliIo } from './command.js';

/**
 * Prints an error the way an operator can act on it, `error: ...` then `hint: ...`, and returns
 * the exit code: 2 for usage and configuration, 1 for everything else. Stack traces only for
 * errors that are not ours (a bug), so they can be reported.
 */
export function reportError(error: unknown, io: CliIo, usage?: string): number {
  if (error instanceof TransportError) {
    io.stderr.write(`transport-sync: error: ${error.message}\n`);
    if (error.hint) io.stderr.write(`  hint: ${error.hint}\n`);
    const isUsage = exitClassOf(error.code) === 'usage';
    if (isUsage && error.code === 'cli.usage' && usage) io.stderr.write(`\n${usage}\n`);
    return isUsage ? EXIT.usage : EXIT.failure;
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  io.stderr.write(`transport-sync: unexpected error: ${text}\n`);
  return EXIT.failure;
}
