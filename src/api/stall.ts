/**
 * The limits of one attempt, on one AbortController: the whole attempt's time, and the stall
 * timer of its headers and body (the time until the headers arrive, then the longest wait between
 * two chunks of the body). The caller's own signal aborts it too. A stall aborts with the code
 * undici gives the same timeout, so that logs and the retry rules read as they did when undici
 * kept them.
 *
 * One controller and two plain timers, rather than AbortSignal.timeout and AbortSignal.any: a
 * first sync makes some 170 attempts, and those two cost it about 7 ms of CPU and their garbage
 * (docs/performance.md).
 */
export interface StallTimer {
  /** Aborted by either timer or by the caller's signal, with that one's reason. */
  signal: AbortSignal;
  /** From now on, `ms` without progress aborts with `code`. */
  restart(ms: number, code: string): void;
  /** Progress: the wait starts again. */
  touch(): void;
  /** Whether a timer fired (not the caller). */
  readonly isTimedOut: boolean;
  stop(): void;
}

/** Starts an attempt's timers: `attemptMs` in all, `stallMs` without progress (`code`). */
export function attemptTimers(
  attemptMs: number,
  stallMs: number,
  code: string,
  callerSignal?: AbortSignal,
): StallTimer {
  const controller = new AbortController();
  let isTimedOut = false;
  const timeOut = (reason: Error) => {
    isTimedOut = true;
    controller.abort(reason);
  };
  const start = (waitMs: number, reason: string) =>
    setTimeout(() => timeOut(stalled(reason, waitMs)), waitMs).unref();
  let stall = start(stallMs, code);
  const whole = setTimeout(() => timeOut(attemptTimeout(attemptMs)), attemptMs).unref();
  const onCallerAbort = () => controller.abort(callerSignal!.reason);
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    restart(waitMs, reason) {
      clearTimeout(stall);
      stall = start(waitMs, reason);
    },
    touch: () => void stall.refresh(),
    get isTimedOut() {
      return isTimedOut;
    },
    stop() {
      clearTimeout(stall);
      clearTimeout(whole);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}

function stalled(code: string, ms: number): Error {
  const error = new Error(`no progress for ${ms} ms (${code})`);
  error.name = 'TimeoutError';
  return Object.assign(error, { code });
}

function attemptTimeout(ms: number): Error {
  const error = new Error(`the attempt took longer than ${ms} ms`);
  error.name = 'TimeoutError';
  return error;
}
