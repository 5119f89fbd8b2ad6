import { afterEach, describe, expect, it, vi } from 'vitest';
import { normalizeTimestamp } from '../../../src/time.js';
import { queryAll, queryOne } from '../../helpers/engine.js';
import { expectMirrorEqualsWebhookTruth } from '../../helpers/webhook-truth.js';
import { startWebhookFixture, type WebhookFixture } from '../../helpers/webhooks.js';

type Row = Record<string, unknown>;

let hook: WebhookFixture;
afterEach(async () => hook?.close());

describe('webhooks from the simulator', () => {
  it.each([
    ['', 0.1],
    [', every request in drifted forms (pre-2026-03-01 strings, unknown members)', 1],
  ])(
    'alone (no polling) converge to the truth for every field webhooks carry, through duplicates and reordering%s',
    async (_title, driftRate) => {
      hook = await startWebhookFixture({
        requests: 0,
        roughness: { driftRate },
        webhooks: {
          url: 'http://127.0.0.1:9/',
          retryDelaysMs: [0, 20, 100],
          duplicateRate: 0.3,
          reorder: true,
        },
      });
      const sender = hook.sim.webhooks!;
      hook.sim.addRequests(25);
      hook.sim.addRequests(10, { state: 'accepted' });
      hook.sim.addRequests(4, { roundTrip: true });
      for (let round = 0; round < 8; round += 1) {
        hook.clock.advance(60_000);
        hook.sim.mutate(15);
        await sender.idle();
        await hook.service.idle();
      }
      // The provider's own actions through the API: accept, decline, best time, change request.
      const awaiting = hook.sim.truth().filter((t) => t.isVisible && t.listState === 'awaiting');
      await hook.client.accept(awaiting[0]!.requestId);
      await hook.client.decline(awaiting[1]!.requestId);
      hook.clock.advance(60_000);
      hook.sim.mutate(20);
      await sender.idle();
      await hook.service.idle();

      expect(sender.stats.lost).toBe(0);
      expect(sender.stats.duplicates).toBeGreaterThan(0);
      expect(
        await hook.count(
          'SELECT count(*) AS n FROM webhook_events WHERE processed_at IS NULL OR error IS NOT NULL',
        ),
      ).toBe(0);
      expect(await hook.count('SELECT count(*) AS n FROM webhook_events')).toBe(
        sender.stats.events,
      );
      expect(await expectMirrorEqualsWebhookTruth(hook)).toBeGreaterThan(30);
      expect(
        await hook.count('SELECT count(*) AS n FROM requests WHERE unavailable_at IS NOT NULL'),
      ).toBeGreaterThan(0);
      const reads = ['detail', 'list', 'details_list'];
      expect(hook.sim.calls.filter((call) => reads.includes(call.endpoint))).toHaveLength(0);
      if (driftRate === 1) {
        // Every event applied all the same; each retyped member recorded, by type name only.
        const retyped = await queryAll<{ member: string }>(
          hook.db,
          "SELECT DISTINCT member FROM schema_drift WHERE source = 'webhook' AND problem = 'type' AND expected = 'boolean' AND received = 'string'",
        );
        expect(retyped.length).toBeGreaterThanOrEqual(10);
        expect(
          await hook.count("SELECT count(*) AS n FROM schema_drift WHERE problem = 'unknown'"),
        ).toBeGreaterThan(0);
      }
    },
  );

  it('as v1.0 cues alone, converge through detail fetches (one per request per burst of cues)', async () => {
    hook = await startWebhookFixture({
      requests: 0,
      webhooks: { url: 'http://127.0.0.1:9/', retryDelaysMs: [0, 20, 100], envelope: 'v1' },
    });
    const sender = hook.sim.webhooks!;
    hook.sim.addRequests(15);
    hook.sim.addRequests(10, { state: 'accepted' });
    for (let round = 0; round < 4; round += 1) {
      hook.clock.advance(60_000);
      hook.sim.mutate(10);
      await sender.idle();
      await hook.service.idle();
    }
    sender.sendV1('collection.state.updated', {
      collection_id: 'C1',
      collection_current_state: 'accepted',
      request_ids: hook.sim.truth().map((t) => t.requestId),
    });
    await sender.idle();
    await hook.service.idle();
    for (const truth of hook.sim.truth()) {
      const row = await queryOne<Row>(
        hook.db,
        'SELECT request_current_state, transport_agreed_for_time, patient_last_name, unavailable_at, source FROM requests WHERE request_id = @id',
        { id: truth.requestId },
      );
      const detail = truth.detail as Row;
      if (!truth.isVisible) {
        if (row) expect(row.unavailable_at, truth.requestId).not.toBeNull();
        continue;
      }
      expect(row, truth.requestId).toEqual({
        request_current_state: detail.request_current_state,
        transport_agreed_for_time: detail.transport_agreed_for_time
          ? normalizeTimestamp(detail.transport_agreed_for_time as string)
          : null,
        patient_last_name: detail.patient_last_name,
        unavailable_at: null,
        source: 'webhook',
      });
    }
    expect(
      await hook.count(
        "SELECT count(*) AS n FROM webhook_events WHERE envelope = 'v1' AND processed_at IS NOT NULL AND error IS NULL",
      ),
    ).toBe(sender.stats.events);
  });

  it('retries a delivery the receiver missed, on the scaled schedule', async () => {
    hook = await startWebhookFixture({
      requests: 0,
      webhooks: { url: 'http://127.0.0.1:9/', retryDelaysMs: [0, 150, 300] },
    });
    const sender = hook.sim.webhooks!;
    const url = sender.url;
    sender.url = 'http://127.0.0.1:9/webhooks/'; // nothing listens: the first attempt fails
    hook.sim.addRequests(1);
    // Between the failed attempt and the next, the report counts it as waiting for its retry.
    // The receiver comes back only then: on a loaded machine a timer set beforehand could fire
    // before the first attempt left, which would then succeed and never retry.
    await vi.waitFor(() => expect(sender.stats.retrying).toBe(1), { timeout: 5_000, interval: 5 });
    sender.url = url;
    await sender.idle();
    await hook.service.idle();
    expect(sender.stats).toMatchObject({ events: 1, delivered: 1, lost: 0, retrying: 0 });
    expect(sender.stats.attempts).toBeGreaterThanOrEqual(2);
    expect(await hook.count('SELECT count(*) AS n FROM requests')).toBe(1);
  });
});
