/**
 * The outbox: provider actions and GPS samples that other programs queue with plain SQL in
 * outbox_actions and outbox_locations, drained back to the service by the daemon.
 *
 * Delivery guarantee.
 * - A row ends either `sent` (the service answered 2xx) or `failed` (the row is invalid, the
 *   service refused it with 400, 403, 404 or 410, or a state timestamp went stale; last_error
 *   says why). Failed rows are never retried. A pending row is never dropped: transient failures
 *   (no connection, timeouts, 429, 5xx, token trouble) leave it pending, with attempts,
 *   last_error and next_attempt_at (5 s doubling to 10 min), through restarts and outages of
 *   any length. Per request, actions go in outbox_id order and samples in timestamp order; a
 *   transient failure holds back that request's later rows, never another request's.
 * - Before each send a committed update counts the attempt and sets last_error to
 *   `outcome unknown: sending since ...`; the row is marked sent in a transaction committed right
 *   after the 2xx, before anything else is done.
 * - So a row reaches the service more than once only if an earlier send's outcome is unknown:
 *   (a) the process died after the request left and before that commit (or the commit itself
 *   failed: full disk, database locked too long), or (b) the call failed in a way that leaves
 *   open whether the service processed it: connection reset or timeout after sending, 500, 502,
 *   504, or 503 without Retry-After. Failures where the service certainly did not process the
 *   call (connection refused, DNS, connect timeout, 429, 503 with Retry-After) never lead to a
 *   repeat. Until such a row is resolved its last_error begins `outcome unknown:`.
 * - What a repeat does at the service:
 *   - accept and decline are never repeated blindly (a repeated accept answers 403 "already
 *     assigned" although the first took effect). The request is read back first: still awaiting
 *     means the earlier send did not take effect, and it is sent; visible to us and no longer
 *     awaiting means it is ours: the accept is marked sent, a decline failed; 403 means it is no
 *     longer available to us: the decline is marked sent (it stands), the accept failed.
 *   - locations: the batch in flight (at most 200 samples) is sent again and the service stores
 *     those samples twice, with the same timestamps and values.
 *   - state: the service records the same name and timestamp again. If the timestamp has gone
 *     stale meanwhile the repeat is refused (400) and the row fails with a note that the earlier
 *     send may have taken effect.
 *   - change_request, best_time: the same proposal is submitted again.
 * This assumes one drainer per database (the daemon's lease sees to it): two drainers on one
 * file could each send the same row.
 */
export { startOutboxDrainer, drainOutbox } from './drainer.js';
export type { DrainSummary, OutboxDeps, OutboxDrainer } from './drainer.js';
export type { OutboxClient } from './queue.js';
export { OUTCOME_UNKNOWN, describeRefusal } from './failures.js';
export {
  ACTION_KINDS,
  checkAction,
  checkSample,
  checkStateName,
  checkStateTimestamp,
  checkText,
  checkTimestamp,
} from './validation.js';
export type { ActionInput, Checked, OutboxAction, Sample } from './validation.js';
export { sendAction } from './send.js';
export { judge, observeRequest } from './readback.js';
