import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
/**
 * Webhooks: the second way in, into the same tables as polling.
 *
 * Flow: receiver (raw body, size limit, RSA-SHA256 signature, JSON) -> one INSERT OR IGNORE
 * into webhook_events -> 2xx -> applier (from the table, event_id order, each payload as the
 * receiver parsed it when it is the same process's: handoff.ts) -> requests,
 * request_locations, accounts, request_profiles, request_changes (source 'webhook').
 *
 * Rules, and why:
 * - Order among webhooks: event_id. An event older than one already applied to the request
 *   (one that carried data or said UNAVAILABLE) is skipped; it is still marked processed.
 * - Order against polling: time of observation. A webhook is observed at its event_timestamp,
 *   a polled detail when its fetch started; the store skips whichever is older than the row's
 *   synced_at (and than its unavailable mark). Polled details compare last_updated as before.
 * - A webhook that changes a row clears last_updated_timestamp_utc and content_hash: they
 *   described the polled record the webhook superseded, so the next poll sees a difference,
 *   fetches the detail, and polling and webhooks end on the same row.
 * - requests.raw_json holds the record of the last write that changed the row, whichever path
 *   wrote it (requests.source says which): a detail record or a webhook data object. Every
 *   payload as received stays in webhook_events.payload_json.
 * - Webhooks carry no facility id and no location ids: facility_id stays as polled and the
 *   facility's name goes to request_profiles.facility_name; a location whose content changed
 *   loses its stored id (the id named the old place) until the next detail brings the new one.
 * - v1.0 events (and v2.0 events with malformed data, when polling is on) queue a detail fetch
 *   through the poll's refreshRequest, deduped per request; a v1.0 event is processed only once
 *   its fetches are stored.
 */
import type { Clock } from '../clock.js';
import type { Config } from '../config/index.js';
import type { Store } from '../db/store.js';
import { TransportError } from '../errors.js';
import { listenOn, parseListen as parseListenSetting, stopServer } from '../listen.js';
import type { Logger } from '../log.js';
import type { SyncClient } from '../sync/ports.js';
import { createApplier, type EventApplier } from './applier.js';
import { createFetchQueue } from './fetch-queue.js';
import type { PayloadHandoff } from './handoff.js';
import { createReceiver } from './receiver.js';
import { createSourcePolicy, DEFAULT_MAX_CONNECTIONS_PER_SOURCE } from './sources.js';
import { missingKey } from './preflight.js';
import { readTlsFiles, watchTlsFiles } from './tls.js';
import { createVerifier, loadPublicKey, type SignatureVerifier } from './signature.js';

export type { EventApplier } from './applier.js';
export type { PayloadHandoff, ReceivedEvent } from './handoff.js';

/** The settings the webhook service reads. */
export type WebhookConfig = Pick<
  Config,
  | 'webhookListen'
  | 'webhookPath'
  | 'webhookSignatureHeader'
  | 'webhookPublicKeyFile'
  | 'isWebhookUnsignedAllowed'
  | 'webhookMaxBodyBytes'
  | 'concurrency'
> &
  Partial<
    Pick<
      Config,
      | 'schemaPolicy'
      | 'webhookTlsCertFile'
      | 'webhookTlsKeyFile'
      | 'webhookAllowFrom'
      | 'trustedProxies'
      | 'webhookMaxConnectionsPerSource'
    >
  >;

/** What the receiver and the applier are told. */
interface WebhookDeps {
  config: WebhookConfig;
  store: Store;
  log: Logger;
  /** Told each event's outcome, and each refused delivery or connection, for metrics. */
  onOutcome?: (outcome: string) => void;
}

/** A running receiver. */
export interface WebhookReceiver {
  url: string;
  /** Stops accepting; answers in flight are sent first. */
  stop(): Promise<void>;
}

/**
 * Starts the webhook receiver on TRANSPORT_WEBHOOK_LISTEN: it stores each delivery and answers;
 * applying is the applier's (startEventApplier), in this process or, on a shared PostgreSQL
 * database, in whichever daemon leads. Refuses to start without a public key unless unsigned
 * deliveries are explicitly allowed.
 */
export async function startWebhookReceiver({
  config,
  store,
  log,
  fallback,
  onOutcome,
  onStoreHealth,
  handoff,
  onStored,
}: WebhookDeps & {
  /** Other routes served on the same address (the monitoring endpoint when they share it). */
  fallback?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Told when storing a delivery fails, and when it works again (the intake ledger). */
  onStoreHealth?: (isStoring: boolean) => void;
  /**
   * Given each new delivery's parsed body inside the transaction that stores it, before the
   * commit, and told which to let go of if the commit fails (the applier's, when it runs here).
   */
  handoff?: PayloadHandoff;
  /** Told after a new event is stored (to wake the applier). */
  onStored: () => void;
}): Promise<WebhookReceiver> {
  const wlog = log.child({ area: 'webhooks' });
  const verify = verifierFrom(config, wlog);
  const tlsFiles =
    config.webhookTlsCertFile && config.webhookTlsKeyFile
      ? { certFile: config.webhookTlsCertFile, keyFile: config.webhookTlsKeyFile }
      : null;
  const server = createReceiver({
    path: config.webhookPath,
    maxBodyBytes: config.webhookMaxBodyBytes,
    verify,
    signatureHeader: config.webhookSignatureHeader,
    storeEvents: (rows, beforeCommit) =>
      store.transaction(async (tx) => {
        const isNew = await tx.events.insertMany(rows);
        beforeCommit(isNew);
        return isNew;
      }),
    now: () => store.now(),
    log: wlog,
    ...(handoff && { handoff }),
    onStored,
    onRefused: onOutcome,
    onStoreHealth,
    sources: createSourcePolicy({
      allowFrom: config.webhookAllowFrom,
      trustedProxies: config.trustedProxies,
      maxConnectionsPerSource:
        config.webhookMaxConnectionsPerSource ?? DEFAULT_MAX_CONNECTIONS_PER_SOURCE,
    }),
    fallback,
    ...(tlsFiles && { tls: readTlsFiles(tlsFiles) }),
  });
  const base = await listenOn(server, requireListen(config.webhookListen), {
    ...WEBHOOK_LISTEN,
    code: 'webhook.listen_failed',
    what: 'webhooks',
    scheme: tlsFiles ? 'https' : 'http',
  });
  const unwatch = tlsFiles ? watchTlsFiles(server as HttpsServer, tlsFiles, wlog) : () => undefined;
  const url = `${base}${config.webhookPath}`;
  const pending = await store.read((tx) => tx.events.pendingCount());
  wlog.info(
    {
      url,
      isSigned: verify !== null,
      isTls: tlsFiles !== null,
      allowFrom: config.webhookAllowFrom ?? 'anyone',
      pending,
    },
    'webhook receiver listening',
  );
  if (fallback && config.webhookAllowFrom?.length) {
    wlog.warn(
      'the monitoring endpoint shares the webhook address, so TRANSPORT_WEBHOOK_ALLOW_FROM applies to scrapes too; give TRANSPORT_METRICS_LISTEN its own address',
    );
  }
  let stopping: Promise<void> | undefined;
  return {
    url,
    stop() {
      stopping ??= (async () => {
        unwatch();
        await stopServer(server);
      })();
      return stopping;
    },
  };
}

/**
 * Applies stored events, from the table, in event_id order: at once (the backlog a crash or a
 * stop left), whenever woken, and every `pollMs` when other processes store events too (several
 * daemons on one PostgreSQL database: each receives, the leader applies).
 */
export function startEventApplier({
  config,
  store,
  client,
  log,
  clock,
  pollingIsOn,
  onOutcome,
  pollMs,
}: WebhookDeps & {
  client: SyncClient;
  clock: Clock;
  pollingIsOn: boolean;
  pollMs?: number;
}): EventApplier {
  const aborter = new AbortController();
  const fetches = createFetchQueue({
    client,
    store,
    concurrency: Math.max(1, Math.min(config.concurrency, 8)),
    signal: aborter.signal,
  });
  // With polling on, the detail endpoint is known to serve: worth a fetch when data is malformed.
  const applier = createApplier({
    store,
    fetches,
    clock,
    log: log.child({ area: 'webhooks' }),
    shouldFetchInvalid: pollingIsOn,
    schemaPolicy: config.schemaPolicy ?? 'evolve',
    onOutcome,
  });
  const timer = pollMs ? setInterval(() => applier.wake(), pollMs) : undefined;
  timer?.unref();
  applier.wake();
  let stopping: Promise<void> | undefined;
  return {
    wake: () => applier.wake(),
    hold: (event) => applier.hold(event),
    drop: (eventIds) => applier.drop(eventIds),
    idle: () => applier.idle(),
    stop() {
      stopping ??= (async () => {
        clearInterval(timer);
        await applier.stop();
        aborter.abort();
        await fetches.idle();
      })();
      return stopping;
    },
  };
}

function verifierFrom(config: WebhookConfig, log: Logger): SignatureVerifier | null {
  if (config.webhookPublicKeyFile)
    return createVerifier(loadPublicKey(config.webhookPublicKeyFile));
  if (!config.isWebhookUnsignedAllowed) throw missingKey();
  log.warn(
    'webhook signatures are NOT verified (TRANSPORT_WEBHOOK_ALLOW_UNSIGNED=1, no public key)',
  );
  return null;
}

const WEBHOOK_LISTEN = { envName: 'TRANSPORT_WEBHOOK_LISTEN', example: '127.0.0.1:8787' };

function requireListen(listen: string | undefined): string {
  if (!listen) {
    throw new TransportError({
      code: 'webhook.no_listen',
      message: 'TRANSPORT_WEBHOOK_LISTEN is not set',
      hint: 'Set it to host:port, e.g. 127.0.0.1:8787.',
    });
  }
  return listen;
}

/** TRANSPORT_WEBHOOK_LISTEN as host and port. */
export function parseListen(listen: string | undefined): { host: string; port: number } {
  return parseListenSetting(requireListen(listen), WEBHOOK_LISTEN);
}
