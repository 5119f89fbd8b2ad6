import { Worker } from 'node:worker_threads';
import type {
  SimCall,
  SimOps,
  SimReplyMessage,
  SnapshotEntry,
  WorldOptions,
} from './sim-protocol.js';

/** The simulator running in a worker thread, driven from the bench. */
export interface SimWorker {
  url: string;
  options: WorldOptions;
  /** Visible requests per state with event time in [fromMs, toMs]. */
  census(fromMs: number, toMs: number): Promise<Record<string, number>>;
  /** `count` ids of visible requests in `states` inside the window, spread evenly. */
  pick(states: string[], count: number, fromMs: number, toMs: number): Promise<string[]>;
  /** Changes each request once (an edit or a state change): last_updated moves forward. */
  change(ids: string[]): Promise<number>;
  /** `count` random mutations by the simulator's driver; what they touched. */
  mutate(count: number): Promise<{ mutations: number; requests: number }>;
  setLatency(ms: number): Promise<void>;
  /** Stops the simulator's moving clock where it is (true), or lets it move on (false). */
  pauseClock(isPaused: boolean): Promise<void>;
  resetCalls(): Promise<void>;
  calls(): Promise<SimCall[]>;
  /** The last access token issued, for the bare client. */
  token(): Promise<string>;
  snapshot(fromMs: number, toMs: number): Promise<SnapshotEntry[]>;
  close(): Promise<void>;
}

/** Starts a simulator with `options` in a new worker thread. */
export async function startSimWorker(options: WorldOptions): Promise<SimWorker> {
  const worker = new Worker(new URL('./sim-worker.js', import.meta.url));
  const waiting = new Map<number, { resolve(value: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  worker.on('message', (reply: SimReplyMessage) => {
    const waiter = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (!waiter) return;
    if (reply.ok) waiter.resolve(reply.value);
    else waiter.reject(new Error(`simulator worker: ${reply.error}`));
  });
  worker.on('error', (error) => {
    for (const waiter of waiting.values()) waiter.reject(error);
    waiting.clear();
  });
  const rpc = <K extends keyof SimOps>(op: K, args: SimOps[K]['args']) =>
    new Promise<SimOps[K]['result']>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ id, op, args });
    });

  const { url } = await rpc('start', options);
  return {
    url,
    options,
    census: (fromMs, toMs) => rpc('census', { fromMs, toMs }),
    pick: (states, count, fromMs, toMs) => rpc('pick', { states, count, fromMs, toMs }),
    change: (ids) => rpc('change', { ids }),
    mutate: (count) => rpc('mutate', { count }),
    setLatency: async (ms) => void (await rpc('setLatency', { ms })),
    pauseClock: async (isPaused) => void (await rpc('pauseClock', { isPaused })),
    resetCalls: async () => void (await rpc('resetCalls', null)),
    calls: () => rpc('calls', null),
    async token() {
      const token = await rpc('token', null);
      if (!token) throw new Error('the simulator has issued no token yet');
      return token;
    },
    snapshot: async (fromMs, toMs) =>
      JSON.parse(await rpc('snapshot', { fromMs, toMs })) as SnapshotEntry[],
    async close() {
      await rpc('close', null);
      await worker.terminate();
    },
  };
}
