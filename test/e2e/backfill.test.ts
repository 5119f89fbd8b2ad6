import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BIN,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  processTracker,
} from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

const processes = processTracker();
afterEach(() => processes.stopAll());

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Truth {
  requestId: string;
  isVisible: boolean;
  eventDtUtc: string;
}

async function visibleIdsIn(url: string, from: string, to: string): Promise<string[]> {
  const truth = (await (await fetch(`${url}/_sim/truth/`)).json()) as Truth[];
  return truth
    .filter((t) => t.isVisible && t.eventDtUtc >= from && t.eventDtUtc <= to)
    .map((t) => t.requestId)
    .sort();
}

async function invisibleIds(url: string): Promise<string[]> {
  const truth = (await (await fetch(`${url}/_sim/truth/`)).json()) as Truth[];
  return truth.filter((t) => !t.isVisible).map((t) => t.requestId);
}

function storedIds(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db
      .prepare('SELECT request_id FROM requests')
      .all()
      .map((row) => (row as { request_id: string }).request_id)
      .sort();
  } finally {
    db.close();
  }
}

async function waitUntil(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('transport-sync backfill as a process', () => {
  it('rejects bad arguments with exit 2 and makes no call', async () => {
    const sim = await startSimulatorProcess(['--requests', '10']);
    processes.track(sim);
    const env = serviceEnv(sim.url, { TRANSPORT_DB: join(tempDir(), 'x.db') });
    const runs = [
      ['--from', '2026-02-01', '--to', '2026-01-01'],
      ['--from', 'last tuesday', '--to', '2026-01-01'],
      ['--from', '2026-01-01', '--to', '2026-02-01', '--states', 'accepted,pending'],
      ['--from', '2026-01-01', '--to', '2026-02-01', '--chunk-hours', '0'],
      ['--to', '2026-02-01'],
    ];
    // Independent runs, each refused before it does anything: side by side, not one by one.
    const results = await Promise.all(runs.map((args) => runCli(['backfill', ...args], env)));
    results.forEach((result, index) => {
      expect(result.code, runs[index]!.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^transport-sync: error: --/);
    });
    const calls = (await (await fetch(`${sim.url}/_sim/calls/`)).json()) as unknown[];
    expect(calls).toHaveLength(0);
  });

  it('killed with SIGKILL part-way, resumes after the last finished window and ends equal to the truth', async () => {
    // A window takes about 15 calls: with 2 ms each on top, over 0.1 s, so the kill (polled every
    // 50 ms) comes part-way through 47 windows, and the resumed run spends its time working.
    const sim = await startSimulatorProcess([
      '--requests',
      '300',
      '--latency',
      '2',
      '--page-size',
      '20',
    ]);
    processes.track(sim);
    const dbPath = join(tempDir(), 'backfill.db');
    const env = serviceEnv(sim.url, { TRANSPORT_DB: dbPath });
    // Named once, so a run across midnight asks and checks the same days.
    const fromDay = day(Date.now() - 31 * DAY);
    const toDay = day(Date.now() + 15 * DAY);
    const args = ['backfill', '--from', fromDay, '--to', toDay, '--chunk-hours', '24'];

    const first = startCli(args, env);
    processes.track(first);
    const finishedWindows = () => {
      try {
        const db = new Database(dbPath, { readonly: true, fileMustExist: true });
        try {
          return (db.prepare('SELECT count(*) AS n FROM backfill_windows').get() as { n: number })
            .n;
        } finally {
          db.close();
        }
      } catch {
        return 0;
      }
    };
    await waitUntil(() => finishedWindows() >= 5);
    first.child.kill('SIGKILL');
    const killed = await first.exited;
    expect(killed.signal).toBe('SIGKILL');
    const db = new Database(dbPath, { readonly: true });
    const done = db
      .prepare('SELECT window_from FROM backfill_windows')
      .all()
      .map((row) => Date.parse((row as { window_from: string }).window_from) / 1000);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();

    await fetch(`${sim.url}/_sim/reset-calls/`, { method: 'POST' });
    const second = await runCli(args, env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(
      new RegExp(`backfill ok: 47/47 windows \\(${done.length} done before\\)`),
    );
    const calls = (await (await fetch(`${sim.url}/_sim/calls/`)).json()) as {
      query: Record<string, string>;
    }[];
    const asked = new Set(
      calls.map((call) => Number(call.query.date__gte)).filter(Number.isFinite),
    );
    for (const from of done) expect(asked.has(Math.floor(from))).toBe(false);

    const from = `${fromDay}T00:00:00.000Z`;
    // The service takes whole seconds, so the client asks up to the next midnight inclusive: the
    // service may show (and the mirror store) a request at exactly that second.
    const to = new Date(Date.parse(`${toDay}T00:00:00Z`) + DAY).toISOString();
    // The simulator moves requests while the pages are read (by default, as the service does):
    // every request visible at the end is stored; the others stored are ones that vanished.
    const stored = storedIds(dbPath);
    const visible = await visibleIdsIn(sim.url, from, to);
    expect(visible.filter((id) => !stored.includes(id))).toEqual([]);
    const vanished = new Set(await invisibleIds(sim.url));
    expect(stored.filter((id) => !visible.includes(id) && !vanished.has(id))).toEqual([]);
  });

  it('interrupted with SIGINT, ends its windows, records the run aborted, logs as it goes, and resumes', async () => {
    // The backfill runs in a worker thread (src/cli/backfill-job.ts): the signal reaches the main
    // thread, which must pass it on, and the worker's log lines must come out of this process.
    const sim = await startSimulatorProcess(['--requests', '300', '--latency', '5']);
    processes.track(sim);
    const dbPath = join(tempDir(), 'interrupted.db');
    const env = serviceEnv(sim.url, { TRANSPORT_DB: dbPath });
    const args = [
      'backfill',
      '--from',
      day(Date.now() - 31 * DAY),
      '--to',
      day(Date.now() + 15 * DAY),
    ];
    const first = startCli(args, env);
    processes.track(first);
    await first.waitForLines(/"msg":"backfill progress"/, 1, { stream: 'stderr' });
    first.child.kill('SIGINT');
    const stopped = await first.exited;
    expect(stopped.code, stopped.stderr).toBe(1);
    expect(stopped.stdout).toMatch(/^backfill aborted: (\d+)\/47 windows \(0 done before\)/);
    expect(stopped.stderr).toMatch(/"msg":"backfill starting"/);
    expect(stopped.stderr).toMatch(/"status":"aborted"[^\n]*"msg":"backfill finished"/);
    expect(stopped.stderr).toMatch(/transport-sync: error: interrupted\n {2}hint: /);
    const done = Number(/^backfill aborted: (\d+)/.exec(stopped.stdout)![1]);
    expect(done).toBeGreaterThanOrEqual(1);
    expect(done).toBeLessThan(47);
    const db = new Database(dbPath, { readonly: true });
    const runs = db.prepare('SELECT kind, status FROM sync_runs').all();
    const windows = (
      db.prepare('SELECT count(*) AS n FROM backfill_windows').get() as { n: number }
    ).n;
    db.close();
    expect(runs).toEqual([{ kind: 'backfill', status: 'aborted' }]);
    expect(windows).toBe(done);

    const second = await runCli(args, env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(
      new RegExp(`^backfill ok: 47/47 windows \\(${done} done before\\)`),
    );
  });

  it("on a terminal, renders the worker's log lines for a person", async () => {
    // script(1) runs the command on a pseudo-terminal: the main thread's stderr is a terminal, so
    // the worker's lines go through pino-pretty, which wants a stream to write to.
    const sim = await startSimulatorProcess(['--requests', '50']);
    processes.track(sim);
    const env = serviceEnv(sim.url, {
      TRANSPORT_DB: join(tempDir(), 'terminal.db'),
      TRANSPORT_ENV_FILE: '',
    });
    const command = [process.execPath, BIN, 'backfill', '--from', day(Date.now() - 2 * DAY)]
      .concat(['--to', day(Date.now() + DAY)])
      .join(' ');
    const { stdout } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], { env });
    // eslint-disable-next-line no-control-regex -- the terminal's colours
    const text = stdout.replace(/\u001b\[[0-9;]*m/g, '');
    expect(text).toMatch(/INFO: backfill starting/);
    expect(text).not.toMatch(/"msg":/);
    expect(text).toMatch(/backfill ok: 4\/4 windows/);
  });

  it('runs while the daemon runs on the same database, both completing', async () => {
    const sim = await startSimulatorProcess(['--requests', '300', '--latency', '2']);
    processes.track(sim);
    const dbPath = join(tempDir(), 'shared.db');
    const env = serviceEnv(sim.url, { TRANSPORT_DB: dbPath, TRANSPORT_POLL_CRON: '* * * * * *' });
    const daemon = startCli(['run'], env);
    processes.track(daemon);
    await daemon.waitFor(/"msg":"poll cycle finished"/);
    const backfill = await runCli(
      ['backfill', '--from', day(Date.now() - 31 * DAY), '--to', day(Date.now() + 15 * DAY)],
      env,
    );
    expect(backfill.code, backfill.stderr).toBe(0);
    await daemon.waitFor(
      /"msg":"poll cycle finished"[\s\S]*"msg":"poll cycle finished"[\s\S]*"msg":"poll cycle finished"/,
    );
    daemon.child.kill('SIGTERM');
    const stopped = await daemon.exited;
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).not.toMatch(/SQLITE_BUSY|database is locked/);
    const db = new Database(dbPath, { readonly: true });
    const runs = db.prepare('SELECT kind, status FROM sync_runs').all() as {
      kind: string;
      status: string;
    }[];
    db.close();
    expect(runs.filter((run) => run.kind === 'backfill')).toEqual([
      { kind: 'backfill', status: 'ok' },
    ]);
    // Every cycle completed, but the one SIGTERM may have stopped mid-way (status aborted).
    const polls = runs.filter((run) => run.kind === 'poll').map((run) => run.status);
    if (polls.at(-1) === 'aborted') polls.pop();
    expect(polls.length).toBeGreaterThanOrEqual(3);
    expect(polls.every((status) => status === 'ok')).toBe(true);
  });
});
