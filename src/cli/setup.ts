import { loadConfig, type Config } from '../config/index.js';
import { createLogger, type Logger } from '../log.js';
import type { CliIo } from './command.js';

/**
 * Configuration and logger for a command: flags over environment over defaults. One-shot commands
 * log to stderr so their stdout stays the result; the daemon logs to stdout (journald).
 */
export function setupCommand(
  io: CliIo,
  {
    needsService,
    dbPath,
    logTo = 'stderr',
  }: { needsService: boolean; dbPath?: string; logTo?: 'stdout' | 'stderr' },
): { config: Config; log: Logger } {
  const config = loadConfig({ env: io.env, needsService, overrides: { dbPath } });
  const log = createLogger({
    level: config.logLevel,
    destination: logTo === 'stdout' ? io.stdout : io.stderr,
  });
  return { config, log };
}
