import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, processTracker, startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/records.js';

/*
 * The demo as an operator first meets it, watched for 40 s on the wall clock: what it prints, and
 * how few warnings. In npm run test:slow, as it measures wall time; the demo's flags and lines
 * are tested in test/e2e/demo.test.ts without waiting.
 */

const processes = processTracker();
afterEach(() => processes.stopAll());

/** Warning lines: the daemon's JSON lines at warn or above, or any line that says warn. */
function warningLines(output: string): string[] {
  return output.split('\n').filter((line) => {
    try {
      const parsed = JSON.parse(line) as { level?: unknown };
      if (typeof parsed.level === 'number' && parsed.level >= 40) return true;
    } catch {
      // Not a JSON line: judged by its words.
    }
    return /\bwarn/i.test(line);
  });
}

describe('transport-sync demo at default settings', () => {
  it('prints a summary of what arrived and changed, and at most 5 warning lines in 40 s', async () => {
    const dir = tempDir();
    // No flags, no LOG_LEVEL: the demo as `npm run demo` starts it, into ./data/demo.db.
    const demo = processes.track(startCli(['demo'], cleanEnv(), dir));
    await demo.waitFor(/data in: +polling and signed webhooks/);
    // The one wait on the clock: what an operator watching the demo for 40 s would see.
    await new Promise((resolve) => setTimeout(resolve, 40_000));
    demo.child.kill('SIGINT');
    const { code, stdout, stderr } = await demo.exited;
    expect(code, stderr).toBe(0);

    const warnings = warningLines(`${stdout}\n${stderr}`);
    expect(warnings.length, warnings.join('\n')).toBeLessThanOrEqual(5);
    expect(stderr).not.toMatch(/^\{/m);

    const db = new Database(join(dir, 'data', 'demo.db'), { readonly: true });
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    const created = (source: string) =>
      count(
        `SELECT count(*) AS n FROM request_changes WHERE kind = 'created' AND source = '${source}'`,
      );
    const polledNew = created('poll');
    const webhookNew = created('webhook');
    const stored = count('SELECT count(*) AS n FROM requests');
    const driftMembers = count('SELECT count(DISTINCT member) AS n FROM schema_drift');
    // Each kind of drift was a warning line before the summary: the budget is worth testing.
    const driftKinds = count(
      "SELECT count(DISTINCT source || ' ' || member || ' ' || problem) AS n FROM schema_drift",
    );
    db.close();
    expect(driftKinds).toBeGreaterThan(5);

    // Along the way: cycles, webhook events, and drift as it grew.
    expect(stdout).toMatch(/^cycle 1 ok: [1-9]\d* new, \d+ changed, \d+ unavailable/m);
    expect(stdout).toMatch(/^webhooks: [1-9]\d* events? \(\d+ (new|changed|unchanged)/m);
    expect(stdout).toMatch(/^schema drift: \d+ members? differ from the documented shape/m);
    // At the end: what arrived and changed, as the database has it.
    expect(stdout).toMatch(/^demo summary after \d+ s:$/m);
    expect(stdout).toContain(
      `  arrived:  ${polledNew + webhookNew} new requests (${polledNew} by polling, ${webhookNew} by webhook); `,
    );
    expect(stdout).toMatch(/^ {2}changed: {2}[1-9]\d* changes \(\d+ by polling, \d+ by webhook\)/m);
    expect(stdout).toContain(`  mirror:   ${stored} requests stored\n`);
    expect(stdout).toContain(
      `  drift:    ${driftMembers} members differ from the documented shape`,
    );
  }, 75_000);
});
