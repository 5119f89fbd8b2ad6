import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChangeDocument } from '../../src/feed/document.js';
import { standardWebhookProblem } from './standard-webhooks.js';

/** A delivery the receiver answered 200: what a dispatch system would act on. */
export interface TakenDelivery {
  /** The webhook-id header. */
  id: string;
  document: ChangeDocument;
  /** Why its signature fails the Standard Webhooks check, or null when it passes. */
  problem: string | null;
}

/** A receiver of the feed webhook on loopback, which a test can take down and bring back. */
export interface FeedReceiver {
  url: string;
  /** Deliveries answered 200, in arrival order, repeats included. */
  taken: TakenDelivery[];
  /** The position of each delivery answered 503 while down, in arrival order. */
  refused: number[];
  /** Down: every delivery is answered 503 and taken as nothing. */
  setDown(isDown: boolean): void;
  /** Resolves once `isDone()` holds: checked now and after every delivery, taken or refused. */
  until(isDone: () => boolean, what: string, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a receiver that checks every delivery as a Standard Webhooks library would (with
 * `secret`). A 503 is what a receiver behind a load balancer answers while its backends are down;
 * the daemon must treat it as any failure: retry the same change, later, and nothing after it.
 */
export async function startFeedReceiver(secret: string): Promise<FeedReceiver> {
  const taken: TakenDelivery[] = [];
  const refused: number[] = [];
  let isDown = false;
  const checks = new Set<() => void>();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const document = JSON.parse(body) as ChangeDocument;
      if (isDown) {
        refused.push(document.position);
        response.writeHead(503).end();
      } else {
        taken.push({
          id: String(request.headers['webhook-id']),
          document,
          problem: standardWebhookProblem(secret, request.headers, body),
        });
        response.writeHead(200).end();
      }
      checks.forEach((check) => check());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const until = (isDone: () => boolean, what: string, timeoutMs: number) =>
    new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(timer);
        checks.delete(check);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(
        () => settle(new Error(`the receiver waited ${timeoutMs} ms for ${what}`)),
        timeoutMs,
      );
      const check = () => {
        if (isDone()) settle();
      };
      checks.add(check);
      check();
    });

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/changes`,
    taken,
    refused,
    setDown: (down) => (isDown = down),
    until,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
