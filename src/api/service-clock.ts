import type { HttpResponse } from './http.js';

/**
 * The service's clock as its answers show it. The service writes last_updated to the second, so
 * a record read within the second of its last edit may be edited again under the same
 * last_updated; whether a read came late enough is judged on the service's clock, not ours.
 *
 * An answer's Date header is at least the service's time when it answered, which is at or after
 * our send, so `sent + (date - received)` is a moment the service had certainly reached when it
 * read the record: a lower bound, off by at most the round trip and the header's truncation to
 * the second. Without a Date header the last offset seen stands (zero at first).
 */
export function createServiceClock() {
  let offsetMs = 0;
  return {
    /** The earliest the service can have read what `response` carries (epoch ms, its clock). */
    readAt(response: Pick<HttpResponse, 'headers' | 'sentAtMs' | 'receivedAtMs'>): number {
      const date = Date.parse(response.headers.get('date') ?? '');
      if (Number.isFinite(date)) offsetMs = date - response.receivedAtMs;
      return response.sentAtMs + offsetMs;
    },
  };
}
