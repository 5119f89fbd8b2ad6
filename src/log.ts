import pino, { type Logger, type LoggerOptions } from 'pino';

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

/** The one pino root. Areas take `log.child({ area: 'api' })`. */
export function createLogger(
  options: { level?: string; destination?: pino.DestinationStream } = {},
): Logger {
  const pinoOptions: LoggerOptions = {
    level: options.level ?? 'info',
    base: { service: 'transport-sync' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return options.destination ? pino(pinoOptions, options.destination) : pino(pinoOptions);
}

/** A logger that writes nothing, for library callers and tests that do not care. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
