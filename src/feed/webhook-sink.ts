import type { Clock } from '../clock.js';
import { TransportError } from '../errors.js';
import { attemptTimers, createWire } from '../wire.js';
import type { ChangeDocument } from './document.js';
import type { Sink } from './publisher.js';
import { readSettingFile } from './setting-file.js';
import { parseWebhookSecret, signatureHeaders } from './signature.js';

/** How long one delivery may take, from connecting to the end of the answer. */
const DELIVERY_TIMEOUT_MS = 10_000;

/** How long an idle connection to the receiver is kept for the next delivery. */
const KEEP_ALIVE_MS = 4_000;

/** The outbound webhook's settings. */
export interface WebhookSinkSettings {
  url: string;
  secretFile: string;
  caFile?: string;
  isPhiIncluded: boolean;
}

/**
 * The outbound webhook sink: each change is one POST of its document to the configured URL,
 * signed per the Standard Webhooks specification with `webhook-id` = its position, so that a
 * receiver drops a repeat delivery by id. A 2xx answer acknowledges it; anything else, or no
 * answer within 10 s, fails the delivery, which the publisher retries with backoff. TLS
 * certificates are verified, against TRANSPORT_FEED_WEBHOOK_CA_FILE when set; redirects are not
 * followed. The secret and CA are read here, at start, so a bad file stops the daemon at once.
 */
export function createWebhookSink(settings: WebhookSinkSettings, clock: Clock): Sink {
  const key = parseWebhookSecret(
    readSettingFile(settings.secretFile, 'TRANSPORT_FEED_WEBHOOK_SECRET_FILE'),
    'TRANSPORT_FEED_WEBHOOK_SECRET_FILE',
  );
  const ca = settings.caFile
    ? readSettingFile(settings.caFile, 'TRANSPORT_FEED_WEBHOOK_CA_FILE')
    : undefined;
  const url = new URL(settings.url);
  // The service client's own connection pool (src/wire.ts): no redirect is followed,
  // so a POST never turns into a GET or goes elsewhere.
  const wire = createWire({
    connectMs: DELIVERY_TIMEOUT_MS,
    keepAliveMs: KEEP_ALIVE_MS,
    ...(ca && { ca }),
  });

  async function post(document: ChangeDocument, signal: AbortSignal): Promise<void> {
    const body = JSON.stringify(document);
    const headers = signatureHeaders(
      key,
      String(document.position),
      Math.floor(clock.now() / 1000),
      body,
    );
    let statusCode: number;
    const timers = attemptTimers(
      DELIVERY_TIMEOUT_MS,
      DELIVERY_TIMEOUT_MS,
      'UND_ERR_HEADERS_TIMEOUT',
      signal,
    );
    try {
      const answer = await wire.send({
        url: settings.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
        signal: timers.signal,
      });
      statusCode = answer.status;
      // Read to its end, so that the connection serves the next delivery.
      timers.restart(DELIVERY_TIMEOUT_MS, 'UND_ERR_BODY_TIMEOUT');
      await answer.readBody(timers);
    } catch (error) {
      throw new TransportError({
        code: 'feed.delivery_failed',
        message: `the feed webhook at ${url.origin} could not be reached: ${(error as Error).message}`,
        isRetryable: true,
        cause: error,
      });
    } finally {
      timers.stop();
    }
    if (statusCode < 200 || statusCode > 299) {
      throw new TransportError({
        code: 'feed.delivery_failed',
        message: `the feed webhook at ${url.origin} answered ${statusCode}`,
        isRetryable: true,
        details: { status: statusCode },
      });
    }
  }

  return {
    name: 'webhook',
    isPhiIncluded: settings.isPhiIncluded,
    async deliver(documents, signal, acknowledged) {
      // One at a time, in order: a receiver sees change n only after it acknowledged n - 1.
      for (const document of documents) {
        await post(document, signal);
        acknowledged(document.position);
      }
    },
    close: async () => wire.close(),
  };
}
