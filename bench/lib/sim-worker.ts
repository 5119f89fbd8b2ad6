/**
 * The simulator in a worker thread: its own event loop and heap, on the other core, as a remote
 * service would be, while the bench keeps the in-process control it needs (pick and change
 * requests by id, latency, the calls it received).
 */
import { parentPort } from 'node:worker_threads';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import type { SimRequest } from '../../src/simulator/model.js';
import { eventMs } from '../../src/simulator/serialize.js';
import type {
  SimCall,
  SimOps,
  SimReplyMessage,
  SimRequestMessage,
  WorldOptions,
} from './sim-protocol.js';
import { snapshotOf } from './snapshot.js';
const EDITS = ['note', 'location', 'service_level', 'patient'] as const;

let sim: Simulator | undefined;
/** The moving clock's pauses: how long it stood still so far, and since when it stands. */
const pause = { totalMs: 0, sinceMs: null as number | null };

function mustSim(): Simulator {
  if (!sim) throw new Error('simulator not started');
  return sim;
}

function visibleIn(fromMs: number, toMs: number): SimRequest[] {
  return mustSim()
    .world.all()
    .filter((r) => r.isVisible && eventMs(r) >= fromMs && eventMs(r) <= toMs);
}

type Handlers = { [K in keyof SimOps]: (args: SimOps[K]['args']) => Promise<SimOps[K]['result']> };

const handlers: Handlers = {
  async start(options: WorldOptions) {
    const startedAt = performance.now();
    const now =
      options.clock === 'fixed'
        ? () => options.nowMs
        : options.clock === 'real'
          ? () => Date.now()
          : () =>
              options.nowMs +
              Math.floor((pause.sinceMs ?? performance.now()) - startedAt - pause.totalMs);
    sim = createSimulator({
      seed: options.seed,
      requests: options.requests,
      pastDays: options.pastDays,
      futureDays: options.futureDays,
      pageSize: options.pageSize,
      clock: { now, sleep: async () => undefined },
      // Throughput, not correctness: records do not move while a cycle pages, so an idle cycle
      // is idle. (Drift stays: it is a property of the records, not of the moment. Same-second
      // edits stay too: last_updated is written to the second.)
      roughness: { pagingChurnRate: 0, ...options.roughness },
    });
    return sim.listen(0, '127.0.0.1');
  },
  async census({ fromMs, toMs }) {
    const counts: Record<string, number> = {};
    for (const r of visibleIn(fromMs, toMs)) counts[r.state] = (counts[r.state] ?? 0) + 1;
    return counts;
  },
  async pick({ states, count, fromMs, toMs }) {
    // Spread evenly over the candidates, so changes fall on every page and every account.
    const candidates = visibleIn(fromMs, toMs).filter((r) => states.includes(r.state));
    if (candidates.length < count) {
      throw new Error(`only ${candidates.length} candidates for ${count} changes`);
    }
    const step = candidates.length / count;
    return Array.from({ length: count }, (_, i) => candidates[Math.floor(i * step)]!.id);
  },
  async change({ ids }) {
    // Edits of every kind, and every fourth accepted request completed: a state change.
    const { world } = mustSim();
    ids.forEach((id, i) => {
      const request = world.get(id);
      if (i % 4 === 0 && request?.state === 'accepted') world.setState(id, 'completed');
      else world.editRequest(id, EDITS[i % EDITS.length]);
    });
    return ids.length;
  },
  async mutate({ count }) {
    const summaries = mustSim().mutate(count);
    return {
      mutations: summaries.length,
      requests: new Set(summaries.map((s) => s.requestId)).size,
    };
  },
  async pauseClock({ isPaused }) {
    if (isPaused && pause.sinceMs === null) pause.sinceMs = performance.now();
    if (!isPaused && pause.sinceMs !== null) {
      pause.totalMs += performance.now() - pause.sinceMs;
      pause.sinceMs = null;
    }
    return null;
  },
  async setLatency({ ms }) {
    mustSim().setLatency(ms);
    return null;
  },
  async resetCalls() {
    mustSim().resetCalls();
    return null;
  },
  async calls() {
    return mustSim().calls.map((call): SimCall => ({
      path: call.path,
      query: call.query,
      endpoint: call.endpoint,
      status: call.status,
    }));
  },
  async token() {
    return mustSim().issuedTokens().at(-1) ?? null;
  },
  async snapshot({ fromMs, toMs }) {
    return JSON.stringify(snapshotOf(mustSim(), fromMs, toMs));
  },
  async close() {
    await sim?.close();
    sim = undefined;
    return null;
  },
};

const port = parentPort;
if (!port) throw new Error('sim-worker.js runs as a worker thread');
port.on('message', (message: SimRequestMessage) => {
  const handler = handlers[message.op] as (args: unknown) => Promise<unknown>;
  handler(message.args).then(
    (value) => port.postMessage({ id: message.id, ok: true, value } satisfies SimReplyMessage),
    (error: unknown) =>
      port.postMessage({
        id: message.id,
        ok: false,
        error: error instanceof Error ? error.message : String(error),
      } satisfies SimReplyMessage),
  );
});
