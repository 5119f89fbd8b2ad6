import { describe, expect, it } from 'vitest';
import { createHandoff } from '../../../src/webhooks/handoff.js';

const event = (eventId: string, bytes: number) => ({
  eventId,
  payload: { event_id: eventId },
  bytes,
});

describe('the handoff of parsed payloads to the applier', () => {
  it('gives each held payload once, then no longer holds it', () => {
    const handoff = createHandoff(1_000);
    handoff.hold(event('EV1', 400));
    expect(handoff.has('EV1')).toBe(true);
    expect(handoff.take('EV1')).toEqual({ event_id: 'EV1' });
    expect(handoff.has('EV1')).toBe(false);
    expect(handoff.take('EV1')).toBeUndefined();
    expect(handoff.bytes).toBe(0);
  });

  it('holds no more than its limit, keeping the oldest', () => {
    const handoff = createHandoff(1_000);
    handoff.hold(event('EV1', 400));
    handoff.hold(event('EV2', 400));
    handoff.hold(event('EV3', 400));
    expect([handoff.has('EV1'), handoff.has('EV2'), handoff.has('EV3')]).toEqual([
      true,
      true,
      false,
    ]);
    expect(handoff.bytes).toBe(800);
    handoff.take('EV1');
    handoff.hold(event('EV4', 400));
    expect(handoff.has('EV4')).toBe(true);
    expect(handoff.bytes).toBe(800);
  });

  it('counts an event held twice once', () => {
    const handoff = createHandoff(1_000);
    handoff.hold(event('EV1', 400));
    handoff.hold(event('EV1', 400));
    expect(handoff.bytes).toBe(400);
  });

  it('lets go of dropped payloads, and of their bytes', () => {
    const handoff = createHandoff(1_000);
    handoff.hold(event('EV1', 400));
    handoff.hold(event('EV2', 300));
    handoff.drop(['EV1', 'EV9']);
    expect([handoff.has('EV1'), handoff.has('EV2')]).toEqual([false, true]);
    expect(handoff.bytes).toBe(300);
  });

  it('holds nothing once cleared', () => {
    const handoff = createHandoff(1_000);
    handoff.hold(event('EV1', 400));
    handoff.clear();
    expect(handoff.has('EV1')).toBe(false);
    expect(handoff.bytes).toBe(0);
  });
});
