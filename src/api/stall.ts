/**
 * undici's headers and body timeouts, kept by the attempt itself so that Node's own fetch
 * dispatcher serves (http.ts): the time until the headers arrive, then the longest wait between
 * two chunks of the body. A stall aborts the attempt with the code undici gives the same timeout.
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

/** The body's bytes, each chunk restarting the stall timer. */
export async function readBody(response: Response, stall: StallTimer): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    stall.touch();
    chunks.push(value);
    size += value.byteLength;
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}
