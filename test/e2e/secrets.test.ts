import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type RunningCli,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

/*
 * Everything the product writes (logs at every level, command output, every cell of the database)
 * is searched for the client secret and for every access token the simulator issued, under
 * faults and tokens that expire mid-cycle. Patient names must not appear in logs at info.
 */

const DAY = 86_400_000;
let sim: RunningCli & { url: string };
const captured: string[] = [];
let dbPath: string;

beforeAll(async () => {
  sim = await startSimulatorProcess([
    '--requests',
    '150',
    '--token-ttl',
    '2',
    '--fault-rate',
    '0.06',
    '--latency',
    '3',
  ]);
  dbPath = join(tempDir(), 'secrets.db');
});
afterAll(async () => {
  sim.child.kill('SIGTERM');
  await sim.exited;
});

describe('secrets and patient data', () => {
  it('appear nowhere: not in logs at any level, command output, errors, sync_runs or any table', async () => {
    const env = serviceEnv(sim.url, {
      TRANSPORT_DB: dbPath,
      LOG_LEVEL: 'trace',
      TRANSPORT_POLL_CRON: '* * * * * *',
    });
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    // Eleven days in windows of five: every request of the range, in few list calls. Each call
    // risks a fault, and a 429 halves the client's rate (it recovers at a request a second per
    // quiet second): in windows of a day, the same backfill made four times the calls and took
    // some 20 s at under 10 calls a second.
    const backfill = ['--from', day(Date.now() - 5 * DAY), '--to', day(Date.now() + 5 * DAY)];
    for (const args of [['sync'], ['backfill', ...backfill, '--chunk-hours', '120'], ['sync']]) {
      const result = await runCli(args, env);
      captured.push(result.stdout, result.stderr);
    }
    const daemon = startCli(['run'], env);
    // Several cycles, across a token expiry (every 2 s), at trace level.
    const cyclesFinished = () =>
      daemon.output().stdout.match(/"msg":"poll cycle finished"/g)?.length ?? 0;
    await vi.waitUntil(() => cyclesFinished() >= 3, { timeout: 20_000, interval: 50 });
    daemon.child.kill('SIGTERM');
    const stopped = await daemon.exited;
    captured.push(stopped.stdout, stopped.stderr);
    // Wrong credentials: the error path must not echo the secret either.
    const refused = await runCli(['sync'], {
      ...env,
      TRANSPORT_CLIENT_SECRET: 'wrong-secret-value-9',
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/TRANSPORT_CLIENT_ID|client/i);
    captured.push(refused.stdout, refused.stderr);

    const tokens = (await (await fetch(`${sim.url}/_sim/tokens/`)).json()) as string[];
    expect(tokens.length).toBeGreaterThan(3); // the scan covers many tokens, not one
    const db = new Database(dbPath, { readonly: true });
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
      name: string;
    }[];
    for (const { name } of tables) {
      for (const row of db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[]) {
        captured.push(Object.values(row).map(String).join('\u0001'));
      }
    }
    db.close();
    const everything = captured.join('\n');
    expect(everything.length).toBeGreaterThan(10_000);
    const found = ['demo-secret', 'wrong-secret-value-9', ...tokens].filter((secret) =>
      everything.includes(secret),
    );
    expect(found).toEqual([]);
  }, 60_000);

  it('keeps patient names out of logs at info level', async () => {
    const env = serviceEnv(sim.url, {
      TRANSPORT_DB: join(tempDir(), 'info.db'),
      LOG_LEVEL: 'info',
    });
    const result = await runCli(['sync'], env);
    const truth = (await (await fetch(`${sim.url}/_sim/truth/`)).json()) as {
      detail: { patient_last_name: string | null };
    }[];
    const surnames = [
      ...new Set(
        truth
          .map((t) => t.detail.patient_last_name)
          .filter((name): name is string => Boolean(name) && name!.length > 3),
      ),
    ];
    expect(surnames.length).toBeGreaterThan(10);
    const logs = result.stdout + result.stderr;
    expect(surnames.filter((name) => logs.includes(name))).toEqual([]);
  });
});
