import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, serviceEnv, startSimulatorProcess, type RunningCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

/* The provider-action commands as users run them: the built CLI against the simulator process. */

let sim: RunningCli & { url: string };
let dir: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  sim = await startSimulatorProcess(['--requests', '20']);
  dir = tempDir();
  env = serviceEnv(sim.url, { TRANSPORT_DB: join(dir, 'mirror.db') });
});
afterAll(async () => {
  sim.child.kill('SIGTERM');
  await sim.exited;
});
beforeEach(async () => {
  await control('POST', 'reset-calls');
});

async function control(method: string, path: string, query = ''): Promise<unknown> {
  const reply = await fetch(`${sim.url}/_sim/${path}/${query}`, { method });
  return reply.json();
}
const newRequest = async (state: 'awaiting' | 'accepted') =>
  ((await control('POST', 'requests', `?count=1&state=${state}`)) as string[])[0]!;
const apiCalls = async () => (await control('GET', 'calls')) as { endpoint: string }[];
const actions = async () =>
  (await control('GET', 'actions')) as { kind: string; requestId: string; body: unknown }[];

describe('checks before sending: exit 2 and no call', () => {
  it('refuses notes over 450 characters', async () => {
    const id = await newRequest('awaiting');
    const result = await runCli(['accept', id, '--notes', 'x'.repeat(451)], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'transport-sync: error: notes is 451 characters long; at most 450 are allowed\n',
    );
    expect(await apiCalls()).toEqual([]);
  });

  it('refuses unknown state names, future and stale times, bad samples and a long reason', async () => {
    const id = await newRequest('accepted');
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    const eightDaysAgo = new Date(Date.now() - 8 * 86_400_000).toISOString();
    const samples = join(dir, 'bad.ndjson');
    writeFileSync(
      samples,
      '{"lat": 41.8, "lng": -87.6, "alt": 180, "timestamp": 1750000000}\n{"lat": "41.8", "lng": -87.6}\n',
    );
    const runs = [
      ['state', id, 'parked'],
      ['state', id, 'arrived', '--at', inAnHour],
      ['state', id, 'arrived', '--at', eightDaysAgo],
      ['locations', id, '--file', samples],
      ['change-request', id, '--at', inAnHour, '--reason', 'r'.repeat(451)],
      ['best-time', id, '--at', 'tomorrow'],
    ];
    const results = await Promise.all(runs.map((args) => runCli(args, env)));
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(results.map((r) => r.stderr.split('\n')[0])).toEqual([
      'transport-sync: error: unknown state name; expected one of en_route, arrived, on_board, arrived_at_destination, completed, canceled, dry_run',
      'transport-sync: error: state timestamp is in the future',
      'transport-sync: error: state timestamp is older than 7 days (stale)',
      'transport-sync: error: invalid samples: line 2: lat is not a number, alt is missing, timestamp is missing',
      'transport-sync: error: --reason is 451 characters long; at most 450 are allowed',
      'transport-sync: error: --at is not an ISO-8601 timestamp',
    ]);
    expect(await apiCalls()).toEqual([]);
  });
});

describe('the service answers', () => {
  it('accepts, refreshes the mirror row, and shows the 403 plainly when accepting again', async () => {
    const id = await newRequest('awaiting');
    const accepted = await runCli(['accept', id, '--notes', 'ETA 15 min'], env);
    expect(accepted).toMatchObject({ code: 0, stdout: `accepted ${id}; mirror row refreshed\n` });
    const db = new Database(env.TRANSPORT_DB!, { readonly: true });
    const row = db.prepare('SELECT list_state, source FROM requests WHERE request_id = ?').get(id);
    db.close();
    expect(row).toEqual({ list_state: 'accepted', source: 'action' });

    const again = await runCli(['accept', id], env);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(
      `transport-sync: error: accept ${id}: not available to you: already assigned, declined or canceled (403); the service said: You do not have permission to perform this action.\n`,
    );
  });

  it('says an unknown id is unknown (404)', async () => {
    const result = await runCli(['decline', 'NOPE0000'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^transport-sync: error: decline NOPE0000: unknown request id \(404\)/,
    );
  });

  it('sends a state, a change request, a best time and 450 samples in three calls', async () => {
    const trip = await newRequest('accepted');
    const offered = await newRequest('awaiting');
    const file = join(dir, 'trip.json');
    const start = Math.floor(Date.now() / 1000) - 600;
    const samples = Array.from({ length: 450 }, (_, i) => ({
      lat: 41.8 + i / 1e4,
      lng: -87.6,
      alt: 180,
      timestamp: start + i,
    }));
    writeFileSync(file, JSON.stringify(samples));
    const at = new Date(Date.now() + 2 * 3_600_000).toISOString();
    await fetch(`${sim.url}/_sim/reset-calls/`, { method: 'POST' });

    const results = [
      await runCli(['state', trip, 'en_route'], env),
      await runCli(['locations', trip, '--file', file], env),
      await runCli(['change-request', trip, '--at', at, '--reason', 'crew delayed'], env),
      await runCli(['best-time', offered, '--at', at], env),
    ];

    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    expect(results[0]!.stdout).toMatch(new RegExp(`^state en_route sent for ${trip} at \\d{4}-`));
    expect(results[1]!.stdout).toBe(`sent 450 samples for ${trip} in 3 calls\n`);
    const recorded = (await actions()).filter(
      (a) => a.requestId === trip || a.requestId === offered,
    );
    expect(recorded.map((a) => a.kind)).toEqual([
      'state',
      'locations',
      'locations',
      'locations',
      'change_request',
      'best_time',
    ]);
    expect(recorded.slice(1, 4).map((a) => (a.body as unknown[]).length)).toEqual([200, 200, 50]);
    // To the hub's v2.0 path by default; to the retired v1.0 path with the setting.
    const locationCalls = async () =>
      ((await (await fetch(`${sim.url}/_sim/calls/`)).json()) as { endpoint: string }[])
        .map((call) => call.endpoint)
        .filter((endpoint) => endpoint.startsWith('locations'));
    expect(await locationCalls()).toEqual(['locations_v2', 'locations_v2', 'locations_v2']);
    const v1 = await runCli(['locations', trip, '--file', file], {
      ...env,
      TRANSPORT_LOCATIONS_API: 'v1',
    });
    expect(v1.code, v1.stderr).toBe(0);
    expect((await locationCalls()).slice(3)).toEqual(['locations', 'locations', 'locations']);
  });
});
