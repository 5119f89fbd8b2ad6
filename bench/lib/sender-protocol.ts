/** Messages between the bench and the webhook sender in its worker thread (sender-worker.ts). */

/** One signed delivery. */
export interface Delivery {
  body: string;
  signature: string;
}

/** What the sender is asked to do. */
export interface SendJob {
  url: string;
  header: string;
  concurrency: number;
  deliveries: Delivery[];
}

/** What it reports; times are absolute (performance.timeOrigin + performance.now()), in ms. */
export interface SendResult {
  /** Per delivery, from sending to the response status. */
  latenciesMs: number[];
  statuses: Record<string, number>;
  startedAtMs: number;
  finishedAtMs: number;
}
