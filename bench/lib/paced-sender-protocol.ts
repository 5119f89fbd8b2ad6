/** Messages between the bench and the paced webhook sender in its worker thread. */
import type { Delivery } from './sender-protocol.js';

/** Deliveries to post at a steady rate, each on schedule whatever the answers before it. */
export interface PacedSendJob {
  url: string;
  header: string;
  /** Deliveries started per second: delivery i goes out i / rate seconds after the first. */
  ratePerSecond: number;
  /** Connections to the receiver: enough that a slow answer never holds the next one back. */
  connections: number;
  deliveries: Delivery[];
}

/**
 * What the sender reports, per delivery in job order. Times are absolute
 * (performance.timeOrigin + performance.now()) in ms, comparable across threads.
 */
export interface PacedSendResult {
  /** When each delivery was due by the schedule. */
  dueAtMs: number[];
  /** When it was sent. */
  sentAtMs: number[];
  /** When its answer's status arrived (NaN when none did). */
  answeredAtMs: number[];
  /** The status of each answer, or 0 when the request failed. */
  statuses: number[];
  /** Why requests failed, when some did (the first few). */
  errors: string[];
}
