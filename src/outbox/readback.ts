import type { Store } from '../db/store.js';
import { isTransportError, TransportError } from '../errors.js';
import { pendingOf, quarantineRecord, storeRecord } from '../sync/refresh.js';
import type { SyncClient } from '../sync/ports.js';

/**
 * Reading a request back to learn whether an earlier accept or decline took effect, when its
 * reply was lost (outcome unknown, or the process died before storing it). The detail endpoint
 * shows a request only to the organization it is broadcast or assigned to, so:
 *   - still awaiting: the earlier call did not take effect; sending it (again) is safe;
 *   - visible and no longer awaiting: the request is ours (assigned to this organization);
 *   - 403: the request is no longer available to us (declined, taken by another provider,
 *     expired or canceled).
 * The record read is stored in the mirror as an 'action' write, like the refresh after a success.
 */

/** What the service shows of a request now. */
export type Observed = { kind: 'awaiting' } | { kind: 'ours' } | { kind: 'unavailable' };

/** What to do with an accept or decline whose earlier send may have taken effect. */
export type Verdict =
  { outcome: 'sent'; note: string } | { outcome: 'failed'; reason: string } | { outcome: 'send' };

/** Reads the request's detail, stores it, and says what the service shows. */
export async function observeRequest(
  { client, store }: { client: SyncClient; store: Store },
  requestId: string,
  signal?: AbortSignal,
): Promise<Observed> {
  const observedAt = store.now();
  try {
    const result = await client.getRequest(requestId, { signal });
    if (result.kind === 'rejected') {
      await quarantineRecord(store, result.rejected, 'action');
      // Without a readable state nothing can be decided; the caller tries again later.
      throw new TransportError({
        code: 'outbox.unreadable_request',
        message: `request ${requestId} could not be read back: ${result.rejected.reason}`,
        isRetryable: true,
      });
    }
    await storeRecord(store, { ...pendingOf(result), source: 'action', observedAt });
    return result.record.request_current_state === 'awaiting'
      ? { kind: 'awaiting' }
      : { kind: 'ours' };
  } catch (error) {
    if (!isTransportError(error, 'api.not_available')) throw error;
    await store.transaction((tx) => tx.requests.markUnavailable(requestId, observedAt, 'action'));
    return { kind: 'unavailable' };
  }
}

/** Decides an accept or decline from what the service shows now. */
export function judge(kind: 'accept' | 'decline', observed: Observed): Verdict {
  if (observed.kind === 'awaiting') return { outcome: 'send' };
  if (kind === 'accept') {
    return observed.kind === 'ours'
      ? { outcome: 'sent', note: 'confirmed by reading the request back: it is assigned to us' }
      : {
          outcome: 'failed',
          reason: 'not available to you: already assigned, declined or canceled (read back)',
        };
  }
  return observed.kind === 'unavailable'
    ? {
        outcome: 'sent',
        note: 'confirmed by reading the request back: it is no longer available to us, the decline stands',
      }
    : { outcome: 'failed', reason: 'the request is assigned to us (read back): not declined' };
}
