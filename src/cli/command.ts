import { parseArgs, type ParseArgsConfig } from 'node:util';
import { TransportError } from '../errors.js';

/** Where a command writes; injectable so tests can capture it. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/** One CLI command: one file in src/cli/, a thin shell over the library. */
export interface Command {
  name: string;
  /** One line for `transport-sync help`. */
  summary: string;
  /** Full usage text, printed with `--help` and after a usage error. */
  usage: string;
  /** Runs the command and resolves to the process exit code. */
  run(argv: string[], io: CliIo): Promise<number>;
}

/** Exit codes the CLI promises. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** A usage error: exit 2, message and usage. */
export function usageError(message: string, hint?: string): TransportError {
  return new TransportError({ code: 'cli.usage', message, hint });
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `util.parseArgs` in strict mode, with its errors turned into usage errors (exit 2). Unknown
 * flags and missing values are refused rather than ignored: a typo must not change behaviour.
 */
export function parseCommandArgs<T extends Options>(
  argv: string[],
  options: T,
  { allowPositionals = false }: { allowPositionals?: boolean } = {},
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (error) {
    throw usageError(error instanceof Error ? error.message : String(error));
  }
}

/** Parses a whole number flag within bounds, or throws a usage error naming the flag. */
export function parseIntegerFlag(
  name: string,
  value: string | undefined,
  { min, max, fallback }: { min: number; max: number; fallback: number },
): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw usageError(`--${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return number;
}

/** The `--db PATH` flag every database command takes; it overrides TRANSPORT_DB. */
export const DB_FLAG = { db: { type: 'string' } } as const;
