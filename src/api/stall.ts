/**
 * The attempt's headers and body timeouts: the time until the headers arrive, then the longest
 * wait between two chunks of the body. A stall aborts the attempt with the code undici gives the
 * same timeout, so that logs and the retry rules read as they did when undici kept them.
 */
export interface StallTimer {
  signal: AbortSignal;
  /** From now on, `ms` without progress aborts with `code`. */
  restart(ms: number, code: string): void;
  /** Progress: the wait starts again. */
  touch(): void;
  stop(): void;
}

export function stallTimer(ms: number, code: string): StallTimer {
  const controller = new AbortController();
  const start = (waitMs: number, reason: string) =>
    setTimeout(() => controller.abort(stalled(reason, waitMs)), waitMs).unref();
  let timer = start(ms, code);
  return {
    signal: controller.signal,
    restart(waitMs, reason) {
      clearTimeout(timer);
      timer = start(waitMs, reason);
    },
    touch: () => void timer.refresh(),
    stop: () => clearTimeout(timer),
  };
}

function stalled(code: string, ms: number): Error {
  const error = new Error(`no progress for ${ms} ms (${code})`);
  error.name = 'TimeoutError';
  return Object.assign(error, { code });
}
