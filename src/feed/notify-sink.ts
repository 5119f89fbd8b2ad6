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
 * A round's notifications in one statement, so in one transaction of its own: PostgreSQL
 * delivers them at its commit, all or none, in the order pg_notify was called, which the sorted
 * subquery fixes to the array's.
 */
const NOTIFY_ALL = `SELECT pg_notify(@channel, payload) FROM (
    SELECT payload FROM unnest(@payloads::text[]) WITH ORDINALITY AS p(payload, n) ORDER BY n
  ) AS in_order`;

/**
 * The PostgreSQL NOTIFY sink: each change a notification on `channel` whose payload is its
 * position, request and kind (never patient data); listeners read the rows themselves
 * (`transport-sync changes --since`, or SQL). A round's notifications go out with one statement,
 * in feed order: one round trip on the path from a commit to the listeners.
 */
export function createNotifySink(store: Store, channel: string): Sink {
  return {
    name: 'notify',
    isPhiIncluded: false,
    async deliver(documents, _signal, acknowledged) {
      await store.read((tx) =>
        tx.sql.run(NOTIFY_ALL, { channel, payloads: documents.map(notifyPayload) }),
      );
      for (const document of documents) acknowledged(document.position);
    },
    close: async () => undefined,
  };
}
