/**
 * The built-in simulator of the transport-request service: an HTTP server that behaves as the
 * service is documented to (spec/service-api.md, spec/service-facts.md), over seeded data that a
 * mutation driver keeps changing, with optional faults. Used by `npm run demo`, tests and benches.
 * By default it is at least as rough as the real service (roughness.ts): last_updated to the
 * second, records that move while a client pages, records that drift from the documented shape,
 * double edits; each can be switched off.
 *
 * All randomness comes from `seed` through independent streams (data, mutations, faults, tokens,
 * drift, churn), so one seed gives the same data and the same mutations whatever faults are on.
 * Simulated time comes from `clock`; latency and the mutation interval use real timers.
 */
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../clock.js';
import { silentLogger, type Logger } from '../log.js';
import { isoFromMs } from '../time.js';
import { createPagingChurn } from './churn.js';
import type { ControlTarget } from './control.js';
import { createFaultInjector, type FaultOptions } from './faults.js';
import type { ActionRecord, CallRecord } from './http.js';
import type { MutationSummary, TruthRecord } from './model.js';
import { createMutationDriver } from './mutations.js';
import { createProvider } from './provider.js';
import { createRandom } from './random.js';
import { DEFAULT_ROUGHNESS, mergeRoughness, type Roughness } from './roughness.js';
import { createSimulatorServer } from './server.js';
import { createTokenIssuer } from './tokens.js';
import { createEventFactory, type EventFactory } from './webhook-events.js';
import { createWebhookSender, type WebhookOptions, type WebhookSender } from './webhooks.js';
import { createWorld, type AddRequestsOptions, type World } from './world.js';

export type { DriftProfile } from './drift.js';
export type { FaultOptions } from './faults.js';
export type { ActionKind, ActionRecord, CallRecord, Endpoint, FaultKind } from './http.js';
export { V1_ENDPOINTS } from './http.js';
export type {
  JsonValue,
  MutationKind,
  MutationSummary,
  RequestState,
  TruthRecord,
  UnavailableReason,
} from './model.js';
export { DEFAULT_ROUGHNESS, type Roughness } from './roughness.js';
export type { AddRequestsOptions, CreateRequestsOptions, EditKind, World } from './world.js';
export type { WebhookOptions, WebhookSender, WebhookStats } from './webhooks.js';
export { statusAndAction } from './webhook-events.js';

/** Options of `createSimulator`; every one has a default. */
export interface SimulatorOptions {
  /** Seed of all randomness; default 1. */
  seed?: number;
  /** Requests generated at start; default 200. */
  requests?: number;
  /** Spread of pickup times around now, in days; defaults 30 and 14. */
  pastDays?: number;
  futureDays?: number;
  /** Full-list page size; default 50. */
  pageSize?: number;
  /** Access token lifetime; default 3600. */
  tokenTtlSec?: number;
  /** Accepted client credentials; defaults 'demo-client' / 'demo-secret'. */
  clientId?: string;
  clientSecret?: string;
  /** Source of simulated now; default the system clock. */
  clock?: Clock;
  /** Added to every API response; default 0. */
  latencyMs?: number;
  /** Faults, all off by default. */
  faults?: FaultOptions;
  /** Roughness settings over DEFAULT_ROUGHNESS (all on); e.g. `{ driftRate: 0 }` turns one off. */
  roughness?: Partial<Roughness>;
  /** Send webhooks for every mutation to this receiver; off by default. */
  webhooks?: WebhookOptions;
  log?: Logger;
}

/** A running (or ready to run) simulator. */
export interface Simulator {
  /** Starts listening (default 127.0.0.1, port 0 = ephemeral); url has no trailing slash. */
  listen(port?: number, host?: string): Promise<{ url: string }>;
  /** Stops the server, its keep-alive connections and the mutation timer. */
  close(): Promise<void>;
  /** The base URL (auth_url = hub_url = base_url) once listening. */
  readonly url: string | undefined;
  /** The state and the named mutations tests use (setAgreedTime, makeUnavailable, ...). */
  readonly world: World;
  /** What a perfect mirror should hold, unavailable requests included (isVisible false). */
  truth(): TruthRecord[];
  /** Applies `count` random mutations now. */
  mutate(count: number): MutationSummary[];
  /** Runs `perTick` random mutations every `intervalMs` (real time) until stopped. */
  startMutating(options: { intervalMs: number; perTick: number }): void;
  stopMutating(): void;
  /** New requests created now; returns their ids (2 per request with roundTrip). */
  addRequests(n: number, options?: AddRequestsOptions): string[];
  /** Replaces the fault settings. */
  setFaults(faults: FaultOptions): void;
  /** Changes the roughness settings `next` names (the others stay); applies at once. */
  setRoughness(next: Partial<Roughness>): void;
  /** The roughness settings in effect. */
  getRoughness(): Roughness;
  setLatency(ms: number): void;
  /** API calls received (control calls excluded), oldest first: the last LOG_LIMIT of them. */
  readonly calls: CallRecord[];
  resetCalls(): void;
  /** Provider actions answered 2xx, oldest first: the last LOG_LIMIT of them. */
  readonly actions: ActionRecord[];
  /** Every access token handed out. */
  issuedTokens(): string[];
  /** Emits 'mutation' with a MutationSummary for every change to a request. */
  readonly events: EventEmitter;
  /** The webhook sender, when `webhooks` was given. */
  readonly webhooks: WebhookSender | undefined;
}

/**
 * How many calls and actions the simulator remembers. A demo left running for weeks must not
 * grow without bound; tests and benchmarks stay far below it.
 */
export const LOG_LIMIT = 200_000;

/** Appends to a log and drops its oldest tenth once it passes LOG_LIMIT (amortized cheap). */
export function appendBounded<T>(log: T[], entry: T): void {
  log.push(entry);
  if (log.length > LOG_LIMIT) log.splice(0, log.length - Math.floor(LOG_LIMIT * 0.9));
}

/** Builds a simulator; call `listen` to serve it. */
export function createSimulator(options: SimulatorOptions = {}): Simulator {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? silentLogger();
  const root = createRandom(options.seed ?? 1);
  const events = new EventEmitter();
  const calls: CallRecord[] = [];
  const actions: ActionRecord[] = [];
  let latencyMs = options.latencyMs ?? 0;
  let roughness = mergeRoughness(DEFAULT_ROUGHNESS, options.roughness ?? {});
  let timer: NodeJS.Timeout | undefined;
  let server: Server | undefined;
  let url: string | undefined;

  const world = createWorld({
    rng: root.fork(11),
    clock,
    requests: options.requests ?? 200,
    pastDays: options.pastDays ?? 30,
    futureDays: options.futureDays ?? 14,
    roughness: () => roughness,
    emit: (summary) => events.emit('mutation', summary),
  });
  const driver = createMutationDriver({
    world,
    rng: root.fork(12),
    doubleEditRate: () => roughness.doubleEditRate,
  });
  const pageSize = options.pageSize ?? 50;
  const churn = createPagingChurn({
    world,
    rng: root.fork(18),
    pageSize,
    rate: () => roughness.pagingChurnRate,
  });
  const faults = createFaultInjector({ rng: root.fork(13), clock });
  faults.set(options.faults ?? {});
  const tokens = createTokenIssuer({
    clock,
    rng: root.fork(14),
    ttlSec: options.tokenTtlSec ?? 3600,
  });
  const provider = createProvider(world, root.fork(15));
  // Own streams: switching webhooks on changes neither the data nor the mutations of a seed.
  // Which request and action each event was for, so lost events can be named (/_sim/webhooks/).
  const sentEvents = new Map<string, { requestId: string | null; action: string | null }>();
  const factory = options.webhooks
    ? recordingEvents(createEventFactory({ world, clock, rng: root.fork(17) }), sentEvents)
    : undefined;
  const webhooks =
    options.webhooks && factory
      ? createWebhookSender(options.webhooks, factory, root.fork(16))
      : undefined;
  if (webhooks) events.on('mutation', (summary: MutationSummary) => webhooks.onMutation(summary));

  const sim: Simulator & ControlTarget = {
    get url() {
      return url;
    },
    world,
    calls,
    actions,
    events,
    webhooks,
    truth: () => world.truth(),
    mutate: (count) => driver.mutate(count),
    startMutating({ intervalMs, perTick }) {
      sim.stopMutating();
      timer = setInterval(() => driver.mutate(perTick), intervalMs);
      // The server keeps a process alive; the timer alone must not.
      timer.unref();
    },
    stopMutating() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
    addRequests: (n, opts) => world.addRequests(n, opts),
    setFaults: (next) => faults.set(next),
    getFaults: () => faults.get(),
    setRoughness(next) {
      roughness = mergeRoughness(roughness, next);
    },
    getRoughness: () => ({ ...roughness }),
    setLatency(ms) {
      latencyMs = ms;
    },
    // Emptied in place: callers may hold the array.
    resetCalls: () => void calls.splice(0, calls.length),
    issuedTokens: () => tokens.issued(),
    webhookReport: () =>
      webhooks
        ? {
            stats: { ...webhooks.stats },
            lost: webhooks.lostEventIds.map((eventId) => ({
              eventId,
              ...(sentEvents.get(eventId) ?? { requestId: null, action: null }),
            })),
            acknowledged: [...webhooks.acknowledgedEventIds],
          }
        : null,
    async listen(port = 0, host = '127.0.0.1') {
      if (server) throw new Error('simulator is already listening');
      const srv = createSimulatorServer({
        ctx: {
          world,
          provider,
          tokens,
          clock,
          pageSize,
          clientId: options.clientId ?? 'demo-client',
          clientSecret: options.clientSecret ?? 'demo-secret',
          recordAction: (kind, requestId, body) =>
            appendBounded(actions, { at: isoFromMs(clock.now()), kind, requestId, body }),
        },
        control: sim,
        faults,
        clock,
        log,
        latencyMs: () => latencyMs,
        record: (call) => appendBounded(calls, call),
        afterCall: (client, call) => void churn.afterCall(client, call),
      });
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(port, host, () => {
          srv.off('error', reject);
          resolve();
        });
      });
      server = srv;
      const address = srv.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      url = `http://${shownHost}:${address.port}`;
      log.info({ url }, 'simulator listening');
      return { url };
    },
    async close() {
      sim.stopMutating();
      webhooks?.close();
      const srv = server;
      server = undefined;
      url = undefined;
      if (!srv) return;
      await new Promise<void>((resolve) => {
        srv.close(() => resolve());
        // Idle keep-alive sockets would hold close() open for seconds; end them now.
        srv.closeAllConnections();
      });
    },
  };
  return sim;
}

/** The factory, noting each v2.0 event's request and action as it is made. */
function recordingEvents(
  factory: EventFactory,
  sent: Map<string, { requestId: string | null; action: string | null }>,
): EventFactory {
  return {
    ...factory,
    v2(summary) {
      const event = factory.v2(summary);
      sent.set(String(event.event_id), {
        requestId: summary.requestId,
        action: typeof event.action === 'string' ? event.action : null,
      });
      // Bounded like the call log: a demo left running for weeks must not grow without end.
      if (sent.size > LOG_LIMIT) sent.delete(sent.keys().next().value!);
      return event;
    },
  };
}
