import { jetstreamManager } from '@nats-io/jetstream';
import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';

const positionIn = (headers: MsgHdrs | undefined): number =>
  Number(headers?.get('Nats-Msg-Id') || 0);

/** The position (Nats-Msg-Id) of the last message the stream holds on `subject`; 0 for none. */
export async function lastStoredPosition(nc: NatsConnection, subject: string): Promise<number> {
  const manager = await jetstreamManager(nc);
  const stream = await manager.streams.find(subject);
  const last = await manager.streams.getMessage(stream, { last_by_subj: subject });
  return positionIn(last?.header);
}

/**
 * Resolves once the feed's sink has published `position`, or a later one, on `subject`: on the
 * message's arrival, or at once when the stream already holds it. The subscription starts before
 * the stream is read, so a message published in between is not missed.
 */
export function streamReaches(
  nc: NatsConnection,
  subject: string,
  position: number,
  timeoutMs: number,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let isSettled = false;
    const settle = (error?: unknown) => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      subscription.unsubscribe();
      if (error) reject(error instanceof Error ? error : new Error(String(error)));
      else resolve();
    };
    const subscription = nc.subscribe(subject, {
      callback: (error, message) => {
        if (error) settle(error);
        else if (positionIn(message.headers) >= position) settle();
      },
    });
    const timer = setTimeout(
      () => settle(new Error(`NATS: position ${position} not published within ${timeoutMs} ms`)),
      timeoutMs,
    );
    nc.flush()
      .then(() => lastStoredPosition(nc, subject))
      .then((stored) => {
        if (stored >= position) settle();
      }, settle);
  });
}
