/**
 * The simulator's webhook sender: signs each event with RSA-SHA256 over the exact bytes sent
 * (header X-VectorCare-Signature), delivers it, and retries anything but a 2xx on the service's
 * schedule (at once, after about 8 s, after about 64 s; scalable for tests). It can also
 * duplicate deliveries and shuffle their order, as the real service may.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadAgent, loadConnector } from '../undici.js';
import type { JsonValue, MutationSummary } from './model.js';
import type { Random } from './random.js';
import type { EventFactory } from './webhook-events.js';

/** Webhook options of the simulator. */
export interface WebhookOptions {
  /**
   * Receiver URL, path included; several, comma-separated, stand for receivers behind one
   * address: each attempt goes to the next in turn, as a load balancer would send it.
   */
  url: string;
  /** PEM private key; by default a 2048-bit RSA key pair is generated. */
  privateKey?: string;
  /** Where to write the public key PEM for the receiver (TRANSPORT_WEBHOOK_PUBLIC_KEY_FILE). */
  publicKeyFile?: string;
  /** Wait before each attempt; default [0, 8000, 64000]: three attempts. */
  retryDelaysMs?: number[];
  /** Share of events delivered twice; default 0. */
  duplicateRate?: number;
  /** Shuffle the events queued at the same moment before sending; default false. */
  reorder?: boolean;
  /** Which envelope mutations produce; default v2. */
  envelope?: 'v2' | 'v1';
  signatureHeader?: string;
  /** Deliveries in flight at once; default 8. */
  concurrency?: number;
  /** A delivery without an answer after this long failed; default 10000 (the service's limit). */
  timeoutMs?: number;
  /**
   * PEM file of the certificate authority (or the self-signed certificate itself) an https
   * receiver's certificate is checked against, instead of the system's; read at every
   * connection, so a receiver's renewed certificate can be trusted without a restart.
   */
  caFile?: string;
}

/** Counts of what the sender did. */
export interface WebhookStats {
  events: number;
  attempts: number;
  delivered: number;
  duplicates: number;
  /** Events given up after the last retry. */
  lost: number;
  /** Deliveries whose attempt failed, waiting for the next one (0: every retry is resolved). */
  retrying: number;
}

/** Whether a fetch failed before anything was sent: the receiver refused the connection. */
function isRefused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED';
}

/** How long a receiver that refused a connection stays out of the rotation. */
const RECEIVER_DOWN_MS = 5_000;

/** Receiver URLs from the url option: one, or several comma-separated. */
function receiverUrls(url: string): string[] {
  return url
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
}

/** The sender, as `sim.webhooks`. */
export interface WebhookSender {
  /** Receiver URL; may be changed while running (a test may start its receiver later). */
  url: string;
  readonly publicKeyPem: string;
  readonly stats: WebhookStats;
  /** Ids of events given up after the last retry. */
  readonly lostEventIds: string[];
  /** Ids of events a receiver acknowledged with a 2xx (once each). */
  readonly acknowledgedEventIds: ReadonlySet<string>;
  /** Sends the event for a mutation (the simulator calls this for each one). */
  onMutation(summary: MutationSummary): void;
  /** Signs and sends any payload; returns its event_id when it has one. */
  send(payload: Record<string, JsonValue>): string | undefined;
  /** Sends a v1.0 event (`collection.state.updated`, ...); returns its event_id. */
  sendV1(eventType: string, event: Record<string, JsonValue>): string;
  /** The v2.0 data object of a request as it is now. */
  dataOf(requestId: string): Record<string, JsonValue> | null;
  /** Resolves when nothing is queued, in flight or waiting for a retry. */
  idle(): Promise<void>;
  /** Stops sending; queued and retrying deliveries are dropped. */
  close(): void;
}

interface Delivery {
  eventId: string;
  body: string;
  signature: string;
  attempt: number;
}

/** Builds a sender over `factory`; `rng` decides duplicates and order. */
export function createWebhookSender(
  options: WebhookOptions,
  factory: EventFactory,
  rng: Random,
): WebhookSender {
  let urls = receiverUrls(options.url);
  let turn = 0;
  // Receivers behind one address: a receiver that refused a connection is left out of the
  // rotation for a while, as a load balancer's passive health check would (while one is left).
  const downUntil = new Map<string, number>();
  const nextUrl = () => {
    const now = Date.now();
    for (let tried = 0; tried < urls.length; tried += 1) {
      const candidate = urls[turn++ % urls.length]!;
      if ((downUntil.get(candidate) ?? 0) <= now) return candidate;
    }
    return urls[turn++ % urls.length]!;
  };
  const key = keyOf(options.privateKey);
  const publicKeyPem = key.publicKey;
  if (options.publicKeyFile) writeFileSync(options.publicKeyFile, publicKeyPem, { mode: 0o644 });
  const delays = options.retryDelaysMs ?? [0, 8_000, 64_000];
  const header = options.signatureHeader ?? 'X-VectorCare-Signature';
  const concurrency = options.concurrency ?? 8;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const stats: WebhookStats = {
    events: 0,
    attempts: 0,
    delivered: 0,
    duplicates: 0,
    lost: 0,
    retrying: 0,
  };
  const lostEventIds: string[] = [];
  const acknowledgedEventIds = new Set<string>();
  const caFile = options.caFile;
  const dispatcher = caFile ? trustingAgent(caFile) : undefined;
  let batch: Delivery[] = [];
  const queue: Delivery[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let active = 0;
  let deferred = 0;
  let isFlushing = false;
  let isClosed = false;
  let idleWaiters: (() => void)[] = [];

  const isIdle = () =>
    deferred === 0 && batch.length === 0 && queue.length === 0 && active === 0 && timers.size === 0;
  const settle = () => {
    if (!isIdle() && !isClosed) return;
    for (const resolve of idleWaiters) resolve();
    idleWaiters = [];
  };

  const later = (ms: number, work: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!isClosed) work();
      settle();
    }, ms);
    timers.add(timer);
  };

  const enqueue = (delivery: Delivery) => {
    batch.push(delivery);
    if (isFlushing) return;
    isFlushing = true;
    // Events of one moment leave together, shuffled when asked, as a busy service sends them.
    setImmediate(() => {
      isFlushing = false;
      const items = options.reorder ? rng.sample(batch, batch.length) : batch;
      batch = [];
      queue.push(...items);
      pump();
    });
  };

  const pump = () => {
    while (!isClosed && active < concurrency && queue.length > 0) {
      const delivery = queue.shift() as Delivery;
      active += 1;
      void attempt(delivery).finally(() => {
        active -= 1;
        pump();
        settle();
      });
    }
    settle();
  };

  const post = async (url: string, delivery: Delivery): Promise<boolean> => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [header]: delivery.signature },
      body: delivery.body,
      signal: AbortSignal.timeout(timeoutMs),
      ...(dispatcher && { dispatcher }),
    } as RequestInit);
    await response.arrayBuffer();
    return response.ok;
  };

  const attempt = async (delivery: Delivery) => {
    stats.attempts += 1;
    let isDelivered = false;
    // Several receivers: a refused connection goes on to the next one within the same attempt,
    // as a load balancer retries the next upstream when one will not connect (nothing was sent).
    for (let tried = 0; tried < urls.length; tried += 1) {
      const url = nextUrl();
      try {
        isDelivered = await post(url, delivery);
        break;
      } catch (error) {
        if (urls.length > 1) downUntil.set(url, Date.now() + RECEIVER_DOWN_MS);
        // Reset or timed out: the receiver may have the delivery; only the service's retry follows.
        if (!isRefused(error)) break;
      }
    }
    if (isDelivered) {
      stats.delivered += 1;
      acknowledgedEventIds.add(delivery.eventId);
      return;
    }
    const next = delivery.attempt + 1;
    if (next >= delays.length || isClosed) {
      stats.lost += 1;
      lostEventIds.push(delivery.eventId);
      return;
    }
    stats.retrying += 1;
    later(delays[next] ?? 0, () => {
      stats.retrying -= 1;
      enqueue({ ...delivery, attempt: next });
    });
  };

  const send = (payload: Record<string, JsonValue>): string | undefined => {
    if (isClosed) return undefined;
    const body = JSON.stringify(payload);
    const eventId =
      typeof payload.event_id === 'string' ? payload.event_id : String(payload.event_id ?? '');
    const signature = sign('sha256', Buffer.from(body), key.privateKey).toString('base64');
    stats.events += 1;
    const delivery = { eventId, body, signature, attempt: 0 };
    later(delays[0] ?? 0, () => enqueue(delivery));
    if (options.duplicateRate && rng.chance(options.duplicateRate)) {
      stats.duplicates += 1;
      // The copy leaves a moment later, as a retry after a lost acknowledgement would.
      later((delays[0] ?? 0) + rng.int(1, 20), () => enqueue({ ...delivery }));
    }
    return eventId || undefined;
  };

  return {
    get url() {
      return urls.join(',');
    },
    set url(next: string) {
      urls = receiverUrls(next);
    },
    publicKeyPem,
    stats,
    lostEventIds,
    acknowledgedEventIds,
    onMutation(summary) {
      // Built once the current change is complete: the first leg of a new round trip is
      // emitted before its return leg exists, and its data names that leg.
      deferred += 1;
      queueMicrotask(() => {
        deferred -= 1;
        send(options.envelope === 'v1' ? factory.v1(summary) : factory.v2(summary));
        settle();
      });
    },
    send,
    sendV1: (eventType, event) => send(factory.v1Event(eventType, event)) ?? '',
    dataOf: (id) => factory.dataOf(id),
    idle() {
      if (isIdle() || isClosed) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    close() {
      isClosed = true;
      void dispatcher?.close();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      stats.retrying = 0;
      batch = [];
      queue.length = 0;
      settle();
    },
  };
}

type SigningKey = { privateKey: KeyObject; publicKey: string };

/**
 * The key of the simulators given none, made once per process: an RSA key takes 70 to 250 ms of
 * CPU to generate, and one process may run many simulators (a test worker runs dozens). Each
 * simulator writes the public key to its own file all the same.
 */
let generatedKey: SigningKey | undefined;

function keyOf(pem: string | undefined): SigningKey {
  if (pem) {
    const privateKey = createPrivateKey(pem);
    return { privateKey, publicKey: exportPublic(privateKey) };
  }
  if (!generatedKey) {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    generatedKey = { privateKey: pair.privateKey, publicKey: exportPublic(pair.privateKey) };
  }
  return generatedKey;
}

function exportPublic(privateKey: KeyObject): string {
  return createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
}

/**
 * An Agent that trusts the CA in `caFile`, read again for each new connection, so a test can
 * trust a renewed certificate.
 */
function trustingAgent(caFile: string) {
  const Agent = loadAgent();
  const buildConnector = loadConnector();
  return new Agent({
    connect: (connectOptions, callback) =>
      buildConnector({ ca: readFileSync(caFile) })(connectOptions, callback),
  });
}
