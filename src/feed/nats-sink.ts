import { createRequire } from 'node:module';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { TransportError, describeError } from '../errors.js';
import type { ChangeDocument } from './document.js';
import type { FeedChangeKey, Sink } from './publisher.js';
import { readSettingFile } from './setting-file.js';

const NATS_TIMEOUT_MS = 10_000;

/** The NATS client's modules. */
interface NatsClient {
  core: typeof import('@nats-io/transport-node');
  js: typeof import('@nats-io/jetstream');
}

let natsClient: Promise<NatsClient> | undefined;

/**
 * The NATS client, loaded when a sink first needs it: `run` and `doctor` load this module
 * whatever the settings, and a daemon without NATS need not pay the client's start-up. Its
 * packages are CommonJS, and required: the CLI is a CommonJS bundle compiled from V8's code
 * cache (src/cli/code-cache.ts), where an import() has no module loader to call on Node 20.
 */
function loadNatsClient(): Promise<NatsClient> {
  natsClient ??= Promise.resolve().then(() => {
    const require = createRequire(import.meta.url);
    return {
      core: require('@nats-io/transport-node') as NatsClient['core'],
      js: require('@nats-io/jetstream') as NatsClient['js'],
    };
  });
  return natsClient;
}

/** The NATS sink's settings. */
export interface NatsSinkSettings {
  servers: string[];
  subject: string;
  credsFile?: string;
  caFile?: string;
  isPhiIncluded: boolean;
  /** How long connecting, or one publish's acknowledgement, may take (10 s). */
  timeoutMs?: number;
  /**
   * How long a stream the sink creates keeps a message, in days (TRANSPORT_RETENTION_DAYS: as
   * long as the mirror keeps the change); 0 or unset: the server's default, no limit.
   */
  maxAgeDays?: number;
}

/** The stream the sink creates when none captures its subject: the subject, upper-cased. */
export function streamNameFor(subject: string): string {
  return subject.toUpperCase().replace(/[^A-Z0-9_-]/g, '_');
}

/** The stream that captures `subject`, or null when none does. */
async function findStream(manager: JetStreamManager, subject: string): Promise<string | null> {
  const { js } = await loadNatsClient();
  try {
    return await manager.streams.find(subject);
  } catch (error) {
    const isNone =
      error instanceof js.JetStreamApiError && error.code === js.JetStreamApiCodes.StreamNotFound;
    if (isNone) return null;
    throw error;
  }
}

function deliveryFailed(what: string, error: unknown): TransportError {
  return new TransportError({
    code: 'feed.delivery_failed',
    message: `NATS sink: ${what}: ${describeError(error).message}`,
    hint: 'check TRANSPORT_FEED_NATS_URL, that the server runs with JetStream on, and the credentials',
    cause: error,
  });
}

/**
 * The NATS JetStream sink: each change is one message on the subject, its body the change
 * document, with `Nats-Msg-Id` = its position, published one after another so that the stream
 * holds them in feed order. A change counts as delivered once JetStream acknowledged storing it.
 *
 * At least once, held once: JetStream drops a repeated Nats-Msg-Id within the stream's duplicate
 * window (two minutes by default), and beyond it, before its first publish on each connection
 * and after every failure, the sink reads the subject's last message from the stream and counts
 * every position up to its id as delivered. A daemon killed after the publish and before its
 * cursor was saved, however long ago, does not store the change a second time.
 *
 * A stream must capture the subject. When none does, the sink creates one named after the
 * subject (file storage, messages kept as long as the mirror keeps changes, the server's
 * defaults otherwise): an operator who wants other limits creates it first. The credentials and CA files are read here, at start.
 */
export function createNatsSink(settings: NatsSinkSettings): Sink & { probe(): Promise<string> } {
  const creds = settings.credsFile
    ? readSettingFile(settings.credsFile, 'TRANSPORT_FEED_NATS_CREDS_FILE')
    : undefined;
  const ca = settings.caFile
    ? readSettingFile(settings.caFile, 'TRANSPORT_FEED_NATS_CA_FILE')
    : undefined;
  const encoder = new TextEncoder();
  const timeout = settings.timeoutMs ?? NATS_TIMEOUT_MS;
  let connection: NatsConnection | null = null;
  /** The last position the stream is known to hold; null: read it before publishing. */
  let streamPosition: number | null = null;
  /** The stream's last message as read, until it is checked against the feed (null: checked). */
  let unchecked: (FeedChangeKey & { position: number }) | null = null;

  const connectTo = async ({ isReconnecting }: { isReconnecting: boolean }) => {
    const { core } = await loadNatsClient();
    return core.connect({
      servers: settings.servers,
      name: 'transport-sync',
      timeout,
      // The daemon's connection reconnects by itself; a publish while it is away fails after
      // its timeout and the publisher retries with backoff. doctor's gives up at once.
      maxReconnectAttempts: isReconnecting ? -1 : 0,
      ...(creds && { authenticator: core.credsAuthenticator(encoder.encode(creds)) }),
      ...(ca && { tls: { ca } }),
    });
  };

  async function connected(): Promise<NatsConnection> {
    if (connection && !connection.isClosed()) return connection;
    try {
      connection = await connectTo({ isReconnecting: true });
    } catch (error) {
      throw deliveryFailed(`cannot connect to ${settings.servers.join(', ')}`, error);
    }
    streamPosition = null;
    return connection;
  }

  /** The stream capturing the subject, created when there is none. */
  async function streamOf(manager: JetStreamManager): Promise<string> {
    const found = await findStream(manager, settings.subject);
    if (found) return found;
    const name = streamNameFor(settings.subject);
    const days = settings.maxAgeDays ?? 0;
    const { core } = await loadNatsClient();
    await manager.streams.add({
      name,
      subjects: [settings.subject],
      ...(days > 0 && { max_age: core.nanos(days * 24 * 60 * 60 * 1000) }),
    });
    return name;
  }

  /**
   * The position of the subject's last message in its stream (0: none), kept in `unchecked`
   * with what identifies its change until it is checked against the feed.
   */
  async function readStreamPosition(nc: NatsConnection): Promise<number> {
    try {
      const { js } = await loadNatsClient();
      const manager = await js.jetstreamManager(nc, { timeout });
      const stream = await streamOf(manager);
      const last = await manager.streams.getMessage(stream, { last_by_subj: settings.subject });
      const id = last?.header?.get('Nats-Msg-Id');
      if (!last || !id || !/^\d+$/.test(id)) return 0;
      const document = JSON.parse(new TextDecoder().decode(last.data)) as Partial<ChangeDocument>;
      unchecked = {
        position: Number(id),
        request_id: String(document.request_id),
        committed_at: String(document.committed_at),
      };
      return Number(id);
    } catch (error) {
      throw deliveryFailed(`cannot read the stream of ${settings.subject}`, error);
    }
  }

  /**
   * Before positions are counted as delivered because the stream holds them: its last message
   * must be this feed's change at that position. After a restore, or with another database
   * publishing on the subject, it is not, and skipping would lose the changes that reuse the
   * positions: the sink stops, saying so, until the operator acts.
   */
  async function checkStreamIsOurs(
    changeAt: (position: number) => Promise<FeedChangeKey | undefined>,
  ): Promise<void> {
    const last = unchecked;
    if (!last) return;
    const ours = await changeAt(last.position);
    if (ours?.request_id !== last.request_id || ours.committed_at !== last.committed_at) {
      throw new TransportError({
        code: 'feed.stream_diverged',
        message: `NATS sink: the stream's last message on ${settings.subject} is position ${last.position} of a change this database does not hold there (was the mirror restored or replaced?)`,
        hint: 'tell the consumers of the stream, then give the sink a new subject (TRANSPORT_FEED_NATS_SUBJECT) or empty the stream (docs/operations.md, back up and restore)',
      });
    }
    unchecked = null;
  }

  return {
    name: 'nats',
    isPhiIncluded: settings.isPhiIncluded,
    async probe() {
      let nc: NatsConnection | undefined;
      try {
        nc = await connectTo({ isReconnecting: false });
        const { js } = await loadNatsClient();
        const manager = await js.jetstreamManager(nc, { timeout });
        const stream = await findStream(manager, settings.subject);
        const where = `${nc.getServer()}, JetStream on`;
        return stream
          ? `${where}; stream ${stream} captures ${settings.subject}`
          : `${where}; no stream captures ${settings.subject} yet: the daemon will create ${streamNameFor(settings.subject)}`;
      } catch (error) {
        throw deliveryFailed(`cannot reach JetStream at ${settings.servers.join(', ')}`, error);
      } finally {
        await nc?.close();
      }
    },
    async deliver(documents: readonly ChangeDocument[], signal, acknowledged, changeAt) {
      const nc = await connected();
      if (streamPosition === null) {
        unchecked = null;
        streamPosition = await readStreamPosition(nc);
      }
      if ((documents[0]?.position ?? Infinity) <= streamPosition) await checkStreamIsOurs(changeAt);
      const { js: jetstreamModule } = await loadNatsClient();
      const js = jetstreamModule.jetstream(nc, { timeout });
      for (const document of documents) {
        if (signal.aborted) return;
        if (document.position <= streamPosition) {
          acknowledged(document.position);
          continue;
        }
        try {
          await js.publish(settings.subject, encoder.encode(JSON.stringify(document)), {
            msgID: String(document.position),
          });
        } catch (error) {
          // Stored or not, we cannot tell: read the stream again before the retry.
          streamPosition = null;
          throw deliveryFailed(`position ${document.position} was not acknowledged`, error);
        }
        streamPosition = document.position;
        acknowledged(document.position);
      }
    },
    async close() {
      const nc = connection;
      connection = null;
      if (nc && !nc.isClosed()) await nc.close();
    },
  };
}
