/** Messages between the bench and the simulator in its worker thread (sim-worker.ts). */
import type { Roughness } from '../../src/simulator/index.js';

/**
 * Options of the simulated world. The simulator's clock starts at `nowMs` and, by default,
 * moves on in real time ('moving'): last_updated is written to the second, so a clock that stood
 * still would keep every record it edits unsettled for good (see src/db/settled.ts). 'fixed'
 * keeps it at `nowMs`; 'real' is the system clock (for a client in another process).
 */
export interface WorldOptions {
  seed: number;
  requests: number;
  pastDays: number;
  futureDays: number;
  pageSize: number;
  nowMs: number;
  clock?: 'moving' | 'fixed' | 'real';
  /**
   * Over the simulator's default roughness. The worker turns paging churn off unless this says
   * otherwise: the bench measures throughput, and an idle cycle must stay idle.
   */
  roughness?: Partial<Roughness>;
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
  /** `count` random mutations by the simulator's driver (double edits included, as set). */
  mutate: { args: { count: number }; result: { mutations: number; requests: number } };
  setLatency: { args: { ms: number }; result: null };
  /** Stops the simulator's moving clock where it is, or lets it move on from there. */
  pauseClock: { args: { isPaused: boolean }; result: null };
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
