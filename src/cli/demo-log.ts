/** The log area whose lines the demo leaves to its drift summary (see db/store.ts). */
const DRIFT_AREA = 'schema';

/** A pino destination that turns the daemon's JSON lines into short lines for a person. */
export interface DemoLogStream {
  write(chunk: string): void;
  /** Lines not shown: repeats of one already shown. */
  hiddenLines(): number;
}

/**
 * Where the demo's daemon logs when the operator has not asked for its log (LOG_LEVEL unset).
 * Each line becomes `warning: message: error` (or `error: ...`), once per message: a loop that
 * warns every cycle is told once, its repeats counted for the closing summary. Schema drift
 * lines are left out: the demo's summary tells drift from the database, as `status` does.
 * Lines arrive redacted by pino, as every log line does.
 */
export function createDemoLogStream(write: (line: string) => void): DemoLogStream {
  const shown = new Set<string>();
  let hidden = 0;
  const handle = (text: string) => {
    const line = parseLine(text);
    if (!line) {
      write(`${text}\n`);
      return;
    }
    if (line.area === DRIFT_AREA) return;
    const key = `${line.label}\u0000${line.message}`;
    if (shown.has(key)) {
      hidden += 1;
      return;
    }
    shown.add(key);
    write(`${line.label}: ${line.message}${line.error ? `: ${line.error}` : ''}\n`);
  };
  return {
    write(chunk) {
      for (const text of chunk.split('\n')) if (text.trim() !== '') handle(text);
    },
    hiddenLines: () => hidden,
  };
}

interface LogLine {
  label: string;
  message: string;
  area?: string;
  error?: string;
}

/** A pino JSON line's level, message, area and error message; undefined for any other text. */
export function parseLine(text: string): LogLine | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { level, msg, area, err } = parsed as Record<string, unknown>;
  if (typeof level !== 'number' || typeof msg !== 'string') return undefined;
  const error = (err as { message?: unknown } | undefined)?.message;
  return {
    label: levelLabel(level),
    message: msg,
    ...(typeof area === 'string' && { area }),
    ...(typeof error === 'string' && error !== '' && { error }),
  };
}

/** pino's numeric levels as words: 60 fatal, 50 error, 40 warning, below that info or debug. */
function levelLabel(level: number): string {
  if (level >= 60) return 'fatal';
  if (level >= 50) return 'error';
  if (level >= 40) return 'warning';
  return level >= 30 ? 'info' : 'debug';
}
