import { MAX_SAMPLES_PER_BATCH } from '../api/index.js';
import { describeFieldErrors, type FieldErrors } from '../api/errors.js';
import { isTransportError } from '../errors.js';
import { isoFromMs } from '../time.js';
import { inFlightText, isUncertain } from './failures.js';
import type { OutboxLocationRow } from '../db/store/outbox-store.js';
import { emptyResult, recordFailure, type QueueDeps, type QueueResult } from './queue.js';
import { checkSample, type Sample } from './validation.js';

/**
 * Sends one request's pending samples in timestamp order, in batches of at most 200, one call per
 * batch. Invalid rows fail before the batch is formed and never hold it up; a transient failure
 * stops this request's samples until the batch's backoff ends.
 */
export async function drainLocationQueue(
  deps: QueueDeps,
  requestId: string,
  signal?: AbortSignal,
): Promise<QueueResult> {
  const { store, clock } = deps;
  const result = emptyResult();
  while (!signal?.aborted && !deps.isStopping()) {
    const rows = await store.read((tx) =>
      tx.outbox.locations.pending(requestId, MAX_SAMPLES_PER_BATCH),
    );
    if (rows.length === 0) break;
    const batch: { row: OutboxLocationRow; sample: Sample }[] = [];
    const invalid: { id: number; reason: string }[] = [];
    for (const row of rows) {
      const checked = checkSample(row);
      if (checked.ok) batch.push({ row, sample: checked.value });
      else invalid.push({ id: row.outbox_id, reason: checked.reason });
    }
    if (invalid.length > 0) {
      await store.transaction(async (tx) => {
        for (const { id, reason } of invalid)
          await tx.outbox.locations.markFailed([id], `invalid row: ${reason}`);
      });
      result.failed += invalid.length;
      deps.log.warn({ requestId, rows: invalid.length }, 'invalid outbox locations');
    }
    if (batch.length === 0) continue;

    const ids = batch.map(({ row }) => row.outbox_id);
    const sent = {
      table: 'locations' as const,
      ids,
      attempts: Math.max(...batch.map(({ row }) => row.attempts)) + 1,
      wasUncertain: batch.some(({ row }) => isUncertain(row.last_error)),
    };
    await store.transaction((tx) =>
      tx.outbox.locations.claim(ids, inFlightText(isoFromMs(clock.now()))),
    );
    try {
      await deps.client.sendLocations(
        requestId,
        batch.map(({ sample }) => sample),
        { signal },
      );
    } catch (error) {
      if (!signal?.aborted && (await failSamples(deps, batch, error, result))) continue;
      if (await recordFailure(deps, sent, error, signal, result)) break;
      continue;
    }
    // Stored first, right after the 2xx: a crash after this commit cannot repeat the batch.
    await store.transaction((tx) => tx.outbox.locations.markSent(ids, isoFromMs(clock.now())));
    result.sent += ids.length;
    result.calls += 1;
  }
  return result;
}

/**
 * A 400 that names the offending samples (one field map per element): those fail, the others
 * stay due and go in the next batch. False when the 400 does not say which (the whole batch
 * fails then, in recordFailure).
 */
async function failSamples(
  deps: QueueDeps,
  batch: { row: OutboxLocationRow }[],
  error: unknown,
  result: QueueResult,
): Promise<boolean> {
  if (!isTransportError(error, 'api.invalid')) return false;
  const fields = error.details.fields as FieldErrors | FieldErrors[] | undefined;
  if (!Array.isArray(fields) || fields.length !== batch.length) return false;
  const named = fields.flatMap((map, index) =>
    Object.keys(map).length > 0 ? [{ index, text: describeFieldErrors(map) }] : [],
  );
  // Without a named sample the resend would be refused again: let the whole batch fail.
  if (named.length === 0) return false;
  const now = isoFromMs(deps.clock.now());
  await deps.store.transaction(async (tx) => {
    for (const { index, text } of named) {
      await tx.outbox.locations.markFailed(
        [batch[index]!.row.outbox_id],
        `rejected as invalid (400): ${text}`,
      );
    }
    const namedIndexes = new Set(named.map(({ index }) => index));
    const others = batch
      .filter((_, index) => !namedIndexes.has(index))
      .map(({ row }) => row.outbox_id);
    await tx.outbox.locations.markRetry(
      others,
      'sent with a rejected batch; resent without it',
      now,
    );
  });
  result.failed += named.length;
  return true;
}
