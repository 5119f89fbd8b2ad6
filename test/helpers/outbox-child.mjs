// A drainer in a process of its own, for tests that kill it mid-drain. It uses the built code
// (dist/, as the CLI does) and drains until a pass finds nothing due, printing each pass.
// Usage: node outbox-child.mjs <TRANSPORT_DB: a file path or a postgres:// URL> <service url>
import process from 'node:process';
import { createServiceClient } from '../../dist/api/index.js';
import { systemClock } from '../../dist/clock.js';
import { openDatabase } from '../../dist/db/open.js';
import { createStore } from '../../dist/db/store.js';
import { silentLogger } from '../../dist/log.js';
import { drainOutbox } from '../../dist/outbox/index.js';

const [dbPath, url] = process.argv.slice(2);
const db = await openDatabase({ location: dbPath });
const store = createStore({ db, clock: systemClock });
const client = createServiceClient({
  authUrl: url,
  hubUrl: url,
  baseUrl: url,
  clientId: 'demo-client',
  clientSecret: 'demo-secret',
  rateLimitPerSec: 0,
});
process.stdout.write('ready\n');
for (;;) {
  const summary = await drainOutbox({ store, client, log: silentLogger(), clock: systemClock });
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  if (summary.actionsSent + summary.locationsSent + summary.failed + summary.deferred === 0) break;
}
await client.close();
await db.close();
