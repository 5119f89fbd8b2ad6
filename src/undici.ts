import { createRequire } from 'node:module';
import type * as Undici from 'undici';

/*
 * undici's Agent and buildConnector, required from their own files rather than the package's
 * index. The index loads all of undici (its fetch, WebSocket, cookies, cache, mocks, HTTP/2):
 * 70 ms of CPU at every start of a command that only needs a connection pool (measured: requiring
 * the index 0.17 s, agent.js 0.10 s, nothing 0.06 s). test/unit/undici.test.ts holds them to be
 * the very functions the index exports, so an upgrade that moves them fails there.
 */
const require = createRequire(import.meta.url);

export const Agent = require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
export const buildConnector = require('undici/lib/core/connect.js') as typeof Undici.buildConnector;
