/**
 * Shared by the simulator tests: a clock the test moves, and a small fetch wrapper for the
 * simulator's API over loopback.
 */
import type { Clock } from '../../src/clock.js';
import {
  createSimulator,
  type Roughness,
  type Simulator,
  type SimulatorOptions,
} from '../../src/simulator/index.js';

/** 2025-06-15T12:00:00Z: a fixed "now" so generated data is the same on every run. */
export const T0 = Date.UTC(2025, 5, 15, 12, 0, 0);

/** Every roughness off: the simulator as documented, for tests of the documented behaviour. */
export const SMOOTH: Roughness = {
  lastUpdated: 'strict',
  pagingChurnRate: 0,
  driftRate: 0,
  doubleEditRate: 0,
};

/** A clock that only moves when the test moves it. */
export interface ManualClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

/** A manual clock starting at `startMs`; `sleep` resolves at once (simulated time). */
export function manualClock(startMs = T0): ManualClock {
  let now = startMs;
  return {
    now: () => now,
    sleep: async () => undefined,
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

/** A response with its body read as JSON when it is JSON, else as text. */
export interface Reply {
  status: number;
  headers: Headers;
  body: unknown;
  text: string;
}

/** Options of one API call. */
export interface CallOptions {
  method?: string;
  token?: string;
  /** Sent as JSON unless it is already a string. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** One HTTP call to the simulator. */
export async function call(url: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${url}${path}`, { method: options.method ?? 'GET', headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A fresh access token from the simulator at `url`. */
export async function getToken(url: string): Promise<string> {
  const res = await fetch(`${url}/v2.0/oauth2/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: 'demo-client',
      client_secret: 'demo-secret',
      grant_type: 'client_credentials',
    }),
  });
  const body = (await res.json()) as { access_token: string };
  return body.access_token;
}

/** A listening simulator on a manual clock, with a token. */
export interface Started {
  sim: Simulator;
  url: string;
  clock: ManualClock;
  token: string;
  /** An authorized call. */
  api(path: string, options?: Omit<CallOptions, 'token'>): Promise<Reply>;
}

/** Starts a simulator on port 0 with a manual clock at T0 (unless one is given). */
export async function startSimulator(
  options: SimulatorOptions & { clock?: ManualClock } = {},
): Promise<Started> {
  const clock = options.clock ?? manualClock();
  const sim = createSimulator({ ...options, clock });
  const { url } = await sim.listen(0);
  const token = await getToken(url);
  return {
    sim,
    url,
    clock,
    token,
    api: (path, callOptions = {}) => call(url, path, { ...callOptions, token }),
  };
}

/** Epoch seconds of an ISO timestamp. */
export function epochSec(iso: string): number {
  return Math.floor(Date.parse(iso) / 1000);
}
