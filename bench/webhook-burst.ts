/**
 * Webhook receiver burst: N signed deliveries sent at once over C connections from a worker
 * thread (so the sender does not share the receiver's event loop), against the real service
 * on a temporary SQLite file. Prints p50/p99 time to 2xx, receive rate, and how long applying
 * all of them took.
 *
 *   npx tsx bench/webhook-burst.ts [--events 1000] [--connections 100] [--requests 250]
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { systemClock } from '../src/clock.js';
import { openDatabase } from '../src/db/open.js';
import { createStore } from '../src/db/store.js';
import { silentLogger } from '../src/log.js';
import type { SyncClient } from '../src/sync/ports.js';
import { startWebhookService } from '../test/helpers/webhook-service.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '100' },
    requests: { type: 'string', default: '250' },
  },
});
const events = Number(values.events);
const connections = Number(values.connections);
const requests = Number(values.requests);

// The sender: plain CommonJS in a worker, undici with a bounded pool, one timing per delivery.
const SENDER = `
const { parentPort, workerData } = require('node:worker_threads');
const { Agent, request } = require(workerData.undici);
const agent = new Agent({ connections: workerData.connections });
(async () => {
  const started = performance.now();
  const results = await Promise.all(workerData.bodies.map(async (body, i) => {
    const sent = performance.now();
    const response = await request(workerData.url, { method: 'POST', dispatcher: agent,
      headers: { 'content-type': 'application/json', 'x-vectorcare-signature': workerData.signatures[i] }, body });
    await response.body.text();
    return [response.statusCode, performance.now() - sent];
  }));
  const elapsedMs = performance.now() - started;
  // Then one at a time: the latency of a delivery that does not queue behind others.
  const single = [];
  for (let i = 0; i < workerData.singles.length; i += 1) {
    const sent = performance.now();
    const response = await request(workerData.url, { method: 'POST', dispatcher: agent,
      headers: { 'content-type': 'application/json', 'x-vectorcare-signature': workerData.singleSignatures[i] }, body: workerData.singles[i] });
    await response.body.text();
    single.push(performance.now() - sent);
  }
  parentPort.postMessage({ results, elapsedMs, single });
  await agent.close();
})();
`;

const dir = mkdtempSync(join(tmpdir(), 'webhook-burst-'));
const db = await openDatabase({ location: join(dir, 'bench.db') });
const store = createStore({ db, clock: systemClock });
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const keyFile = join(dir, 'public.pem');
writeFileSync(keyFile, publicKey.export({ type: 'spki', format: 'pem' }));
// v2.0 events carry their data: no detail fetch, so no client is needed.
const noClient = new Proxy({} as SyncClient, {
  get: () => () => Promise.reject(new Error('no client in this bench')),
});
const service = await startWebhookService({
  config: {
    webhookListen: '127.0.0.1:0',
    webhookPath: '/webhooks/',
    webhookSignatureHeader: 'X-VectorCare-Signature',
    webhookPublicKeyFile: keyFile,
    isWebhookUnsignedAllowed: false,
    webhookMaxBodyBytes: 1_048_576,
    concurrency: 4,
  },
  store,
  client: noClient,
  log: silentLogger(),
  clock: systemClock,
  pollingIsOn: false,
});

const bodies = Array.from({ length: events }, (_, i) => JSON.stringify(eventFor(i)));
const signOf = (body: string) => sign('sha256', Buffer.from(body), privateKey).toString('base64');
const signatures = bodies.map(signOf);
const singles = Array.from({ length: 200 }, (_, i) => JSON.stringify(eventFor(events + i)));
const singleSignatures = singles.map(signOf);
const worker = new Worker(SENDER, {
  eval: true,
  workerData: {
    url: service.url,
    bodies,
    signatures,
    singles,
    singleSignatures,
    connections,
    undici: createRequire(import.meta.url).resolve('undici'),
  },
});
const started = performance.now();
const { results, elapsedMs, single } = await new Promise<{
  results: [number, number][];
  elapsedMs: number;
  single: number[];
}>((resolve, reject) => {
  worker.once('message', resolve);
  worker.once('error', reject);
});
const lastReplyMs = performance.now() - started;
await service.idle();
const appliedMs = performance.now() - started;
const pct = (list: number[], p: number) =>
  list[Math.min(list.length - 1, Math.ceil((p / 100) * list.length) - 1)] ?? 0;
const times = results.map(([, ms]) => ms).sort((a, b) => a - b);
const singleTimes = [...single].sort((a, b) => a - b);
const at = (p: number) => pct(times, p);
const ok = results.filter(([status]) => status >= 200 && status < 300).length;
const stored = (await db.read((sql) =>
  sql.get<{ n: number }>('SELECT count(*) AS n FROM webhook_events'),
))!.n;
console.log(
  [
    `deliveries ${events} over ${connections} connections (${requests} requests, ${Math.round(bodies[0]!.length / 100) / 10} kB each)`,
    `2xx ${ok}/${events}, stored ${stored}`,
    `time to 2xx: p50 ${at(50).toFixed(1)} ms, p99 ${at(99).toFixed(1)} ms, max ${at(100).toFixed(1)} ms`,
    `received ${(events / (elapsedMs / 1000)).toFixed(0)} events/s while applying`,
    `one at a time (200, after the burst): p50 ${pct(singleTimes, 50).toFixed(2)} ms, p99 ${pct(singleTimes, 99).toFixed(2)} ms`,
    `all ${events + singles.length} applied ${Math.max(0, appliedMs - lastReplyMs).toFixed(0)} ms after the last reply (${appliedMs.toFixed(0)} ms from the first delivery)`,
  ].join('\n'),
);
await service.stop();
await db.close();
rmSync(dir, { recursive: true, force: true });

function eventFor(i: number): Record<string, unknown> {
  const id = `XX-${String(i % requests).padStart(8, '0')}`;
  const at = new Date(Date.UTC(2026, 10, 21, 10, 0, 0) + i).toISOString();
  return {
    event_id: `evt_${String(i).padStart(9, '0')}`,
    event_timestamp: at,
    service_request_id: id,
    request_status: 'ASSIGNED',
    action: 'BROADCAST_ACCEPTED',
    data: {
      service_request_id: id,
      request_current_state: 'accepted',
      change_request_enabled: true,
      service_type: 'Ambulance',
      service_level_type: 'BLS',
      scheduling_option: 'specific',
      scheduling_type: 'one_way',
      organization_id: 'ORG1',
      account_name: 'Mercy Valley General Hospital',
      facility_name: 'North Campus',
      collection_id: `COL-${id}`,
      service_request_web_url: `https://app.example.invalid/requests/${id}/`,
      agreed_for_time: '2026-11-22T14:30:00Z',
      pickup_date_time: '2026-11-22T14:00:00Z',
      pickup_location: {
        address: '100 N High St, Columbus, OH 43215',
        city: 'Columbus',
        country: 'US',
        name: null,
        state: 'OH',
        street: '100 N High St',
        zip: '43215',
        lat: 39.96,
        lng: -82.99,
      },
      destination_location: {
        address: '7 Elm Ct, Dublin, OH 43017',
        city: 'Dublin',
        country: 'US',
        name: null,
        state: 'OH',
        street: '7 Elm Ct',
        zip: '43017',
        lat: 40.1,
        lng: -83.11,
      },
      patient_first_name: 'Test',
      patient_last_name: 'Patient',
      patient_date_of_birth: '1950-01-01',
      patient_weight_lbs: 180,
      medications: [{ name: 'Heparin', dose: '1000 u/hr' }],
      requester_first_name: 'Dana',
      requester_last_name: 'Reyes',
      requester_email: 'dana@hospital.example',
      responder_user_first_name: 'Open',
      responder_user_last_name: 'API',
      responder_user_email: 'openapi@provider.example',
      note: `note ${i}`,
      is_round_trip_first_trip: false,
      is_round_trip_return_trip: false,
    },
  };
}
