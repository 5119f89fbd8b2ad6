import { createRequire } from 'node:module';
import pino, { type Logger, type LoggerOptions } from 'pino';
import type PinoPretty from 'pino-pretty';

// pino-pretty is loaded only for a terminal: every other run (journald, pipes, tests) skips it.
const require = createRequire(import.meta.url);

/**
 * Paths pino blanks in every log line: credentials, and the patient and request fields a
 * careless `log.debug({ record })` could carry. Info-level lines carry ids and counts only; this
 * list is the second line of defence.
 */
export const REDACT_PATHS = [
  'clientSecret',
  'client_secret',
  'accessToken',
  'access_token',
  'token',
  'authorization',
  'headers.authorization',
  '*.clientSecret',
  '*.client_secret',
  '*.accessToken',
  '*.access_token',
  '*.authorization',
  '*.headers.authorization',
  'config.clientSecret',
  '*.patient_first_name',
  '*.patient_last_name',
  '*.patient_middle_name',
  '*.patient_dob',
  '*.patient_date_of_birth',
  'patient_first_name',
  'patient_last_name',
  'patient_dob',
  'raw_json',
  'payload',
  'body',
];

export type { Logger };

/**
 * The one pino root. Areas take `log.child({ area: 'api' })`. JSON lines (journald, log
 * shippers) unless the destination is a terminal, where pino-pretty renders them for a person;
 * `pretty` overrides the guess. Redaction happens before either, so both are equally safe.
 */
export function createLogger(
  options: {
    level?: string;
    destination?: pino.DestinationStream | NodeJS.WritableStream;
    pretty?: boolean;
  } = {},
): Logger {
  const pinoOptions: LoggerOptions = {
    level: options.level ?? 'info',
    base: { service: 'transport-sync' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  const destination = options.destination;
  const isPretty = options.pretty ?? isTerminal(destination ?? process.stdout);
  if (isPretty) {
    const pretty = require('pino-pretty') as typeof PinoPretty;
    const stream = pretty({
      destination: destination ?? 1,
      sync: true,
      colorize: isTerminal(destination ?? process.stdout),
      translateTime: 'SYS:standard',
      ignore: 'pid,hostname,service',
    });
    return pino(pinoOptions, stream);
  }
  return destination ? pino(pinoOptions, destination as pino.DestinationStream) : pino(pinoOptions);
}

function isTerminal(stream: unknown): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/** A logger that writes nothing, for library callers and tests that do not care. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** Most distinct lines a rate-limited logger remembers; older ones are forgotten first. */
const MAX_REMEMBERED_LINES = 1000;

/** A logger for loops that may fail the same way every few seconds. */
export interface RateLimitedLogger {
  /** Logs unless an identical line was logged within the interval; true when logged. */
  warn(fields: Record<string, unknown>, message: string, key?: string): boolean;
  error(fields: Record<string, unknown>, message: string, key?: string): boolean;
}

/**
 * Logs each distinct line at most once per `intervalMs`, so a service that is down for an hour
 * leaves a handful of lines instead of thousands; the next line that passes carries
 * `suppressed`, how many identical ones were dropped. Lines are identical when their level,
 * message and `err` (code and message) match, or when the caller passes the same `key`.
 */
export function createRateLimitedLogger(
  log: Logger,
  { intervalMs = 60_000, now = Date.now }: { intervalMs?: number; now?: () => number } = {},
): RateLimitedLogger {
  const lines = new Map<string, { at: number; suppressed: number }>();
  const emit = (
    level: 'warn' | 'error',
    fields: Record<string, unknown>,
    message: string,
    key?: string,
  ): boolean => {
    const id = key ?? `${level}\u0000${message}\u0000${JSON.stringify(fields.err ?? null)}`;
    const at = now();
    const seen = lines.get(id);
    if (seen && at - seen.at < intervalMs && at >= seen.at) {
      seen.suppressed += 1;
      return false;
    }
    lines.delete(id); // re-inserted last: the Map's order is then least recently logged first
    if (lines.size >= MAX_REMEMBERED_LINES) lines.delete(lines.keys().next().value!);
    lines.set(id, { at, suppressed: 0 });
    log[level](seen?.suppressed ? { ...fields, suppressed: seen.suppressed } : fields, message);
    return true;
  };
  return {
    warn: (fields, message, key) => emit('warn', fields, message, key),
    error: (fields, message, key) => emit('error', fields, message, key),
  };
}
