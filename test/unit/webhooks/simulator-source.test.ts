// The simulator's webhooks (src/simulator/webhooks.ts), checked against what the receiver takes.
import { describe, expect, it } from 'vitest';
import { webhookDataSchema, webhookV2EventSchema } from '../../../src/api/webhook-schemas.js';
import {
  createSimulator,
  statusAndAction,
  type MutationSummary,
} from '../../../src/simulator/index.js';

const AT = '2026-11-21T10:00:00.000Z';

describe('the simulator as a webhook source', () => {
  const summary = (overrides: Partial<MutationSummary>): MutationSummary => ({
    kind: 'edited',
    requestId: 'A',
    at: AT,
    lastUpdated: AT,
    state: 'accepted',
    isVisible: true,
    origin: 'service',
    ...overrides,
  });

  it('names the documented action and status of each mutation', () => {
    expect(statusAndAction(summary({ kind: 'created', state: 'awaiting' }))).toEqual({
      status: 'AVAILABLE',
      action: 'BROADCAST_RECEIVED',
    });
    expect(statusAndAction(summary({ kind: 'accepted' }))).toEqual({
      status: 'ASSIGNED',
      action: 'BROADCAST_ACCEPTED',
    });
    expect(statusAndAction(summary({ kind: 'completed', state: 'completed' }))).toEqual({
      status: 'COMPLETED',
      action: 'REQUEST_COMPLETED',
    });
    expect(
      statusAndAction(summary({ kind: 'unavailable', isVisible: false, reason: 'declined' })),
    ).toEqual({ status: 'UNAVAILABLE', action: 'BROADCAST_DECLINED' });
    expect(
      statusAndAction(summary({ kind: 'unavailable', isVisible: false, reason: 'expired' })).action,
    ).toBe('BROADCAST_EXPIRED');
    expect(
      statusAndAction(summary({ kind: 'unavailable', isVisible: false, reason: 'canceled' }))
        .action,
    ).toBe('BROADCAST_CANCELED');
    expect(statusAndAction(summary({ kind: 'proposal_accepted' })).action).toBe(
      'PROPOSAL_ACCEPTED',
    );
    expect(statusAndAction(summary({ kind: 'change_request_declined' })).action).toBe(
      'CHANGE_REQUEST_DECLINED',
    );
  });

  it('sends data objects with every documented member, valid, realistic and stable per request', () => {
    // The documented shape: the simulator's drifted forms are tested in simulator-roughness.
    const sim = createSimulator({
      seed: 3,
      requests: 150,
      webhooks: { url: 'http://127.0.0.1:9/' },
      roughness: { driftRate: 0 },
    });
    const members = Object.keys(webhookDataSchema.shape);
    const nullCounts = new Map<string, number>();
    const truths = sim.truth();
    for (const truth of truths) {
      const data = sim.webhooks!.dataOf(truth.requestId)!;
      expect(Object.keys(data)).toEqual(members);
      expect(webhookDataSchema.safeParse(data).success, truth.requestId).toBe(true);
      expect(sim.webhooks!.dataOf(truth.requestId)).toEqual(data);
      expect(data.patient_last_name).toBe(
        (truth.detail as Record<string, unknown>).patient_last_name,
      );
      for (const member of members)
        if (data[member] === null) nullCounts.set(member, (nullCounts.get(member) ?? 0) + 1);
    }
    // Required members are never null; optional ones are null sometimes, but not always.
    expect(nullCounts.get('requester_email')).toBeUndefined();
    expect(nullCounts.get('patient_id')! / truths.length).toBeLessThan(0.3);
    expect(nullCounts.get('contact_name')! / truths.length).toBeGreaterThan(0.2);
    const event = {
      event_id: 'e',
      event_timestamp: AT,
      service_request_id: truths[0]!.requestId,
      request_status: 'ASSIGNED',
      action: 'X',
      data: sim.webhooks!.dataOf(truths[0]!.requestId),
    };
    expect(webhookV2EventSchema.safeParse(event).success).toBe(true);
    sim.webhooks!.close();
  });
});
