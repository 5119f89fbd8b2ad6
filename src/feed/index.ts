import type { Clock } from '../clock.js';
import type { Config } from '../config/index.js';
import type { Connection } from '../db/sql.js';
import type { Store } from '../db/store.js';
import { TransportError } from '../errors.js';
import type { Logger } from '../log.js';
import { startPublisher, type Publisher, type PublisherState, type Sink } from './publisher.js';
import { createFeedReader, sharingReads } from './reader.js';
import { createNatsSink } from './nats-sink.js';
import { createNotifySink } from './notify-sink.js';
import { isNotifyOn } from './sink-names.js';
import { createWebhookSink } from './webhook-sink.js';

/**
 * The sinks `config` sets up, their files read (a bad secret or CA file throws here, at start,
 * with the setting named).
 */
export function createConfiguredSinks(config: Config, clock: Clock, store?: Store): Sink[] {
  const sinks: Sink[] = [];
  if (config.feedWebhookUrl && !config.feedWebhookSecretFile) {
    throw new TransportError({
      code: 'feed.no_secret',
      message:
        'TRANSPORT_FEED_WEBHOOK_URL is set without a signing secret: the outbound webhook is always signed',
      hint: 'set TRANSPORT_FEED_WEBHOOK_SECRET_FILE, or pass the credential feed_webhook_secret in the unit (docs/feed.md)',
    });
  }
  if (config.feedWebhookUrl && config.feedWebhookSecretFile) {
    sinks.push(
      createWebhookSink(
        {
          url: config.feedWebhookUrl,
          secretFile: config.feedWebhookSecretFile,
          ...(config.feedWebhookCaFile && { caFile: config.feedWebhookCaFile }),
          isPhiIncluded: config.isFeedWebhookPhiIncluded,
        },
        clock,
      ),
    );
  }
  const nats = natsSinkOf(config);
  if (nats) sinks.push(nats);
  if (store && isNotifyOn(config)) sinks.push(createNotifySink(store, config.feedPgChannel));
  return sinks;
}

function natsSinkOf(config: Config) {
  if (!config.feedNatsUrl) return undefined;
  return createNatsSink({
    servers: config.feedNatsUrl,
    subject: config.feedNatsSubject,
    ...(config.feedNatsCredsFile && { credsFile: config.feedNatsCredsFile }),
    ...(config.feedNatsCaFile && { caFile: config.feedNatsCaFile }),
    isPhiIncluded: config.isFeedNatsPhiIncluded,
    maxAgeDays: config.retentionDays,
  });
}

/**
 * Connects to the configured NATS servers as the sink will and reports what it found (the
 * server, JetStream, the stream of the subject); throws saying what failed. For `doctor`.
 */
export async function probeNatsSink(config: Config): Promise<string> {
  const sink = natsSinkOf(config);
  if (!sink) throw new Error('TRANSPORT_FEED_NATS_URL is not set');
  try {
    return await sink.probe();
  } finally {
    await sink.close();
  }
}

/** Reads the sinks' files as the daemon will, so that a bad one stops it before it starts. */
export async function checkFeedSinks(config: Config, clock: Clock): Promise<void> {
  for (const sink of createConfiguredSinks(config, clock)) await sink.close();
}

/** The change feed's publishers, one per configured sink, running. */
export interface FeedPublishers {
  states(): PublisherState[];
  stop(): Promise<void>;
}

/** Starts a publisher for each sink `config` sets up (the leader's duty). */
export function startFeedPublishers({
  config,
  db,
  store,
  clock,
  log,
}: {
  config: Config;
  db: Connection;
  store: Store;
  clock: Clock;
  log: Logger;
}): FeedPublishers {
  const reader = sharingReads(createFeedReader(db));
  const publishers: Publisher[] = createConfiguredSinks(config, clock, store).map((sink) => {
    log.info({ sink: sink.name, isPhiIncluded: sink.isPhiIncluded }, 'feed sink started');
    return startPublisher({ sink, store, reader, clock, log });
  });
  // A commit of this process wakes them at once; what other processes commit (a backfill, the
  // other daemons' receivers) they find on their next look, a tenth of a second later.
  const unsubscribe = store.onChangesCommitted(() => {
    for (const publisher of publishers) publisher.wake();
  });
  return {
    states: () => publishers.map((publisher) => publisher.state()),
    async stop() {
      unsubscribe();
      await Promise.all(publishers.map((publisher) => publisher.stop()));
    },
  };
}

export { type Sink, type PublisherState } from './publisher.js';
export { feedSinkNames } from './sink-names.js';
