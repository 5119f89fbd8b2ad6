/**
 * The webhook receiver and its applier started together in one process, for the tests and the
 * benchmarks. The daemon starts them apart: the receiver in src/daemon/lifecycle.ts, the applier
 * with the leader's duties in src/daemon/leader-duties.ts, because on a shared PostgreSQL
 * database every daemon receives and only the leader applies. The wiring is the same: a stored
 * delivery wakes the applier, handing over its parsed body. Kept free of vitest, so that bench/ can use it too.
 */
import { startEventApplier, startWebhookReceiver } from '../../src/webhooks/index.js';

type ApplierOptions = Parameters<typeof startEventApplier>[0];
type ReceiverOptions = Parameters<typeof startWebhookReceiver>[0];

/** A running webhook service: the receiver and the applier together. */
export interface WebhookService {
  /** Where the receiver listens, path included, e.g. https://127.0.0.1:8787/webhooks/. */
  url: string;
  /** Resolves when every stored event is applied (events waiting to be retried aside). */
  idle(): Promise<void>;
  /** Stops receiving, then applying; events not yet applied stay stored for the next start. */
  stop(): Promise<void>;
}

/**
 * Starts the applier, then the receiver (which wakes it). Events stored before a crash or stop
 * are applied at once, from the table.
 */
export async function startWebhookService({
  client,
  clock,
  pollingIsOn,
  fallback,
  onStoreHealth,
  ...deps
}: Omit<ApplierOptions, 'pollMs'> &
  Pick<ReceiverOptions, 'fallback' | 'onStoreHealth'>): Promise<WebhookService> {
  const applier = startEventApplier({ ...deps, client, clock, pollingIsOn });
  try {
    const receiver = await startWebhookReceiver({
      ...deps,
      ...(fallback && { fallback }),
      ...(onStoreHealth && { onStoreHealth }),
      handoff: applier,
      onStored: () => applier.wake(),
    });
    return {
      url: receiver.url,
      idle: () => applier.idle(),
      async stop() {
        await receiver.stop();
        await applier.stop();
      },
    };
  } catch (error) {
    await applier.stop();
    throw error;
  }
}
