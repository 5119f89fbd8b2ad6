/**
 * The outbox: provider actions and GPS samples that other programs queue with plain SQL in
 * outbox_actions and outbox_locations, drained back to the service by the daemon.
 *
 * The delivery guarantee (every row ends sent or failed, none is dropped, and when and how a row
 * can reach the service twice) is written once, in docs/outbox.md; the drainer (drainer.ts), the
 * failure classes (failures.ts) and the read-back of accept and decline (readback.ts) implement
 * it. The HTTP layer's part, which calls may be repeated, is in api/http.ts (RetryMode).
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
