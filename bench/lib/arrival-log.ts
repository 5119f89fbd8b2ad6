/** The sinks of the change feed, as their cursors name them. */
export type SinkName = 'webhook' | 'nats' | 'notify';

/** When a change reached the bench, and when the daemon committed it (when the sink says). */
export interface Arrival {
  /** performance.timeOrigin + performance.now() on arrival, in ms. */
  atMs: number;
  /** The document's committed_at in ms; null where the sink does not carry it (NOTIFY). */
  committedAtMs: number | null;
}

/**
 * The changes one sink brought, by request id, for the events of the run in progress. Each event
 * of a run names a request of its own, so the first change of a request is that event's; a
 * change for a request the run did not send an event for, or a second one, is counted apart.
 */
export interface ArrivalLog {
  sink: SinkName;
  /** Starts a run: from now on the first arrival of each of `ids` is kept, nothing before. */
  expect(ids: readonly string[]): void;
  record(
    change: { requestId: string; kind: string },
    atMs: number,
    committedAtMs: number | null,
  ): void;
  /** Something the sink sent was wrong (a bad signature): the run fails with it at once. */
  fail(problem: string): void;
  /**
   * Resolves with the arrivals once every expected request has one; rejects when `timeoutMs`
   * pass first (a change missing is an error, never a smaller sample) or on a problem.
   */
  complete(timeoutMs: number): Promise<Map<string, Arrival>>;
  /** Changes of this run that were not the first of an expected request, by kind. */
  extras(): Record<string, number>;
}

export function createArrivalLog(sink: SinkName): ArrivalLog {
  let expected = new Set<string>();
  let arrivals = new Map<string, Arrival>();
  let extras: Record<string, number> = {};
  let problem: string | null = null;
  let wake: (() => void) | null = null;
  return {
    sink,
    expect(ids) {
      expected = new Set(ids);
      arrivals = new Map();
      extras = {};
    },
    record({ requestId, kind }, atMs, committedAtMs) {
      if (!expected.has(requestId) || arrivals.has(requestId)) {
        extras[kind] = (extras[kind] ?? 0) + 1;
        return;
      }
      arrivals.set(requestId, { atMs, committedAtMs });
      if (arrivals.size === expected.size) wake?.();
    },
    fail(text) {
      problem ??= text;
      wake?.();
    },
    complete(timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (problem !== null) {
            finish();
            reject(new Error(`${sink} sink: ${problem}`));
          } else if (arrivals.size === expected.size) {
            finish();
            resolve(arrivals);
          }
        };
        const timer = setTimeout(() => {
          finish();
          const missing = [...expected].filter((id) => !arrivals.has(id));
          reject(
            new Error(
              `${sink} sink: ${missing.length} of ${expected.size} changes had not arrived ${timeoutMs} ms after the last event's 2xx (requests ${missing.slice(0, 3).join(', ')}...)`,
            ),
          );
        }, timeoutMs);
        const finish = () => {
          clearTimeout(timer);
          wake = null;
        };
        wake = check;
        check();
      });
    },
    extras: () => ({ ...extras }),
  };
}
