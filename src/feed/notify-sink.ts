import type { Store } from '../db/store.js';
import type { Sink } from './publisher.js';

/** The channel's NOTIFY payload: what a listener needs to read the change's rows. */
export function notifyPayload(document: {
  position: number;
  request_id: string;
  kind: string;
}): string {
  return JSON.stringify({
    position: document.position,
    request_id: document.request_id,
    kind: document.kind,
  });
}

/**
 * The PostgreSQL NOTIFY sink: each change a notification on `channel` whose payload is its
 * position, request and kind (never patient data); listeners read the rows themselves
 * (`transport-sync changes --since`, or SQL). A round's notifications go out in one
 * transaction, in feed order: PostgreSQL delivers them at its commit, all or none.
 */
export function createNotifySink(store: Store, channel: string): Sink {
  return {
    name: 'notify',
    isPhiIncluded: false,
    async deliver(documents, _signal, acknowledged) {
      await store.transaction(async (tx) => {
        for (const document of documents) {
          await tx.sql.run('SELECT pg_notify(@channel, @payload)', {
            channel,
            payload: notifyPayload(document),
          });
        }
      });
      for (const document of documents) acknowledged(document.position);
    },
    close: async () => undefined,
  };
}
