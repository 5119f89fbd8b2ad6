/** Messages between the bench and the simulator in its worker thread (sim-worker.ts). */

/** Options of the simulated world; `nowMs` fixes the simulator's clock. */
export interface WorldOptions {
  seed: number;
  requests: number;
  pastDays: number;
  futureDays: number;
  pageSize: number;
  nowMs: number;
}

/** One visible request as the service would list it, for seeding and store benchmarks. */
export interface SnapshotEntry {
  state: string;
  eventMs: number;
  /** The partial-list item (accepted, completed, canceled only). */
  listItem: Record<string, unknown> | null;
  /** The record as the full list serves it (no location ids). */
  detail: Record<string, unknown>;
}

/** One API call the simulator received. */
export interface SimCall {
  path: string;
  query: Record<string, string>;
  endpoint: string;
  status: number;
}

/** The operations the worker answers, with their argument and result types. */
export interface SimOps {
  start: { args: WorldOptions; result: { url: string } };
  census: { args: { fromMs: number; toMs: number }; result: Record<string, number> };
  pick: {
    args: { states: string[]; count: number; fromMs: number; toMs: number };
    result: string[];
  };
  change: { args: { ids: string[] }; result: number };
  setLatency: { args: { ms: number }; result: null };
  resetCalls: { args: null; result: null };
  calls: { args: null; result: SimCall[] };
  token: { args: null; result: string | null };
  /** JSON of SnapshotEntry[] for the visible requests with event time in [fromMs, toMs]. */
  snapshot: { args: { fromMs: number; toMs: number }; result: string };
  close: { args: null; result: null };
}

/** A request to the worker. */
export interface SimRequestMessage {
  id: number;
  op: keyof SimOps;
  args: unknown;
}

/** The worker's answer. */
export type SimReplyMessage =
  { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };
