import type { ErrorCode } from './error-codes.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TransportError } from './errors.js';

/** What a listening setting is called, for its error messages. */
export interface ListenSetting {
  /** The environment variable, e.g. TRANSPORT_WEBHOOK_LISTEN. */
  envName: string;
  /** An example value for the hint, e.g. 127.0.0.1:8787. */
  example: string;
}

/** `host:port`, `[v6]:port` or `port` (host 127.0.0.1: nothing listens on every address unasked). */
export function parseListen(
  listen: string,
  { envName, example }: ListenSetting,
): { host: string; port: number } {
  const match = /^(?:(?:\[([0-9a-fA-F:]+)\]|([\w.-]+)):)?(\d{1,5})$/.exec(listen.trim());
  const port = Number(match?.[3]);
  if (!match || port > 65_535) {
    throw new TransportError({
      code: 'config.invalid',
      message: `${envName} must be host:port or port (got "${listen}")`,
      hint: `For example ${example}.`,
    });
  }
  return { host: match[1] ?? match[2] ?? '127.0.0.1', port };
}

/**
 * Listens on `listen` and resolves to the base URL (`http://host:port`, or https). A port in use or an
 * address this host lacks rejects with `code` and a hint naming the setting.
 */
export async function listenOn(
  server: Server,
  listen: string,
  setting: ListenSetting & { code: ErrorCode; what: string; scheme?: 'http' | 'https' },
): Promise<string> {
  const { host, port } = parseListen(listen, setting);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new TransportError({
          code: setting.code,
          message: `cannot listen for ${setting.what} on ${host}:${port}: ${error.message}`,
          hint: `Choose another ${setting.envName} or stop what is using it.`,
          cause: error,
        }),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${setting.scheme ?? 'http'}://${shownHost}:${address.port}`;
}

/** How long requests already being served may take to finish once a stop begins. */
export const STOP_GRACE_MS = 1_000;

/**
 * Stops a server without waiting on its clients. `server.close()` alone waits for every
 * keep-alive connection, and a client that keeps sending (the service delivering webhooks, a
 * scraper) keeps its connection busy forever. So: idle connections close at once, and the others
 * as soon as their request is answered; a request that arrives during the stop is answered with
 * `Connection: close`; whatever is still open after the grace period is cut (a webhook delivery
 * cut before its 2xx is sent again by the service, and its event_id makes the repeat harmless).
 */
export function stopServer(server: Server, graceMs = STOP_GRACE_MS): Promise<void> {
  return new Promise<void>((resolve) => {
    server.prependListener('request', (_req, res) => res.setHeader('connection', 'close'));
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
    // A connection whose request was in flight turns idle when answered: close it then.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    sweep.unref();
    cut.unref();
  });
}
