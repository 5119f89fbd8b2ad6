/** A delivery the receiver has just stored, with its body as parsed at intake. */
export interface ReceivedEvent {
  eventId: string;
  payload: Record<string, unknown>;
  /** The body's size: what holding the payload costs, near enough (parsed, about as much). */
  bytes: number;
}

/** Payloads held for the applier of this process (see createHandoff). */
export interface Handoff {
  /** Holds a stored delivery's payload, unless that would hold more than the limit. */
  hold(event: ReceivedEvent): void;
  has(eventId: string): boolean;
  /** The payload held for the event, which is then no longer held. */
  take(eventId: string): unknown;
  /** Lets go of these events' payloads (their deliveries were not stored after all). */
  drop(eventIds: readonly string[]): void;
  clear(): void;
  /** Bytes held. */
  readonly bytes: number;
}

/** What the receiver hands over to: the applier's handoff, seen from intake. */
export type PayloadHandoff = Pick<Handoff, 'hold' | 'drop'>;

/**
 * The payloads the receiver parsed, handed to the applier in the same process, so that an event
 * is parsed once: the applier neither reads its payload back nor parses it again. Bounded by
 * their bodies' bytes: past `limitBytes` (a burst the applier has not caught up with), a delivery
 * is not held, and the applier reads its payload from the table, as it does for events stored
 * before a restart or by another daemon on a shared database. The oldest are kept, as the
 * applier takes them first. A delivery is held inside the transaction that stores it, before
 * its commit: a drain that reads the table once the commit lands finds it held, however late the
 * receiver hears of the commit. A commit that fails drops what it held.
 */
export function createHandoff(limitBytes: number): Handoff {
  const held = new Map<string, { payload: unknown; bytes: number }>();
  let bytes = 0;
  const take = (eventId: string): unknown => {
    const entry = held.get(eventId);
    if (!entry) return undefined;
    held.delete(eventId);
    bytes -= entry.bytes;
    return entry.payload;
  };
  return {
    hold({ eventId, payload, bytes: size }) {
      if (bytes + size > limitBytes || held.has(eventId)) return;
      held.set(eventId, { payload, bytes: size });
      bytes += size;
    },
    has: (eventId) => held.has(eventId),
    take,
    drop(eventIds) {
      for (const eventId of eventIds) take(eventId);
    },
    clear() {
      held.clear();
      bytes = 0;
    },
    get bytes() {
      return bytes;
    },
  };
}
