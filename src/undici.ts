import { createRequire } from 'node:module';
import type * as Undici from 'undici';

/*
 * undici's Agent and buildConnector, required from their own files rather than the package's
 * index, and only when first asked for. The index loads all of undici (its fetch, WebSocket,
 * cookies, cache, mocks, HTTP/2): 70 ms of CPU at every start of a command that only needs a
 * connection pool (measured: requiring the index 0.17 s, agent.js 0.10 s, nothing 0.06 s). The
 * Agent alone is still some 30 files, 40 ms to require: the service client goes without it and
 * without fetch (src/wire.ts), as does the feed's webhook sink; the simulator loads it.
 * test/unit/undici.test.ts holds them to be the very functions the index exports, so an upgrade
 * that moves them fails there.
 */
const require = createRequire(import.meta.url);

/** undici's Agent: a connection pool with limits of its own. */
export const loadAgent = (): typeof Undici.Agent =>
  require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;

/** undici's buildConnector: how an Agent opens its connections (a CA of its own, say). */
export const loadConnector = (): typeof Undici.buildConnector =>
  require('undici/lib/core/connect.js') as typeof Undici.buildConnector;
