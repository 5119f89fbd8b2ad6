/** A time range in milliseconds since the epoch, both ends inclusive. */
export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

const HOUR_MS = 3_600_000;

/** The poll window: now minus the past hours to now plus the future hours. */
export function pollWindow(nowMs: number, pastHours: number, futureHours: number): TimeWindow {
  return { fromMs: nowMs - pastHours * HOUR_MS, toMs: nowMs + futureHours * HOUR_MS };
}

/**
 * Splits a window so that no chunk is expected to hold more than `targetPerChunk` requests,
 * judged by the event times already stored. A quiet window stays one chunk (one call per state).
 * The list filters on whole seconds, so neighbouring chunks share their boundary second: a
 * request there is listed twice, never missed, and the caller dedupes by id.
 */
export function planChunks(
  window: TimeWindow,
  storedEventTimesMs: number[],
  targetPerChunk: number,
): TimeWindow[] {
  const inside = storedEventTimesMs
    .filter((time) => time >= window.fromMs && time <= window.toMs)
    .sort((a, b) => a - b);
  if (inside.length <= targetPerChunk) return [window];
  const chunks: TimeWindow[] = [];
  let fromMs = window.fromMs;
  for (let index = targetPerChunk; index < inside.length; index += targetPerChunk) {
    const boundaryMs = Math.floor(inside[index]! / 1000) * 1000;
    if (boundaryMs <= fromMs) continue; // many requests in one second: keep them together
    chunks.push({ fromMs, toMs: boundaryMs });
    fromMs = boundaryMs;
  }
  chunks.push({ fromMs, toMs: window.toMs });
  return chunks;
}
