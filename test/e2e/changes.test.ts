import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PHI_COLUMNS, type ChangeDocument } from '../../src/feed/document.js';
import {
  cleanEnv,
  runCli,
  serviceEnv,
  startCli,
  startSimulatorProcess,
  type RunningCli,
} from '../helpers/cli.js';
import { createTestDatabase, queryAll, reading, type TestDatabase } from '../helpers/engine.js';
import { changeDocumentValidator } from '../helpers/feed-schema.js';

/*
 * `transport-sync changes` as a process, on the project's engine, beside a `sync` that writes:
 * every change once, in position order, each line a document the published schema accepts,
 * resumable from the last position printed, and patient names only when asked for.
 */

let sim: RunningCli & { url: string };
let database: TestDatabase;
let shell: NodeJS.ProcessEnv;
let followed: ChangeDocument[];
const validator = changeDocumentValidator();

const documentsOf = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ChangeDocument);

beforeAll(async () => {
  sim = await startSimulatorProcess(['--requests', '150']);
  database = await createTestDatabase();
  const env = serviceEnv(sim.url, { TRANSPORT_DB: database.location });
  expect((await runCli(['migrate'], env)).code).toBe(0);
  // A shell beside the daemon's database: no service settings.
  shell = cleanEnv({ TRANSPORT_DB: database.location });
  const changeCount = async () => {
    const rows = await reading(database.location, (db) =>
      queryAll<{ n: number }>(db, 'SELECT count(*) AS n FROM request_changes'),
    );
    return Number(rows[0]!.n);
  };
  const first = await runCli(['sync'], env);
  expect(first.code, first.stderr).toBe(0);
  const before = await changeCount();
  expect(before).toBeGreaterThan(20);
  // Once it has printed what is there, it is waiting: the next sync's changes reach it as they
  // commit.
  const follow = startCli(['changes', '--follow', '--json'], shell);
  await follow.waitForLines(/"position"/, before);
  const mutated = await fetch(`${sim.url}/_sim/mutate/?count=40`, { method: 'POST' });
  expect(mutated.status).toBe(200);
  const second = await runCli(['sync'], env);
  expect(second.code, second.stderr).toBe(0);
  const after = await changeCount();
  expect(after).toBeGreaterThan(before);
  await follow.waitForLines(/"position"/, after);
  follow.child.kill('SIGTERM');
  const stopped = await follow.exited;
  expect(stopped.code, stopped.stderr).toBe(0);
  followed = documentsOf(stopped.stdout);
});
afterAll(async () => {
  sim.child.kill('SIGTERM');
  await sim.exited;
  await database.drop();
});

describe('transport-sync changes', () => {
  it('--follow prints every change once, in position order, as documents the schema accepts', async () => {
    const ids = await reading(database.location, (db) =>
      queryAll<{ change_id: number }>(db, 'SELECT change_id FROM request_changes ORDER BY 1'),
    );
    expect(followed.map((document) => document.position)).toEqual(
      ids.map((row) => Number(row.change_id)),
    );
    for (const document of followed) validator.expectValid(document);
    expect(new Set(followed.map((document) => document.kind))).toContain('new');
    // No names, dates of birth or e-mail without --include-phi.
    for (const document of followed) {
      for (const column of PHI_COLUMNS) {
        expect(document.request ?? {}).not.toHaveProperty(column);
        expect(document.new_values ?? {}).not.toHaveProperty(column);
      }
    }
  });

  it('goes on after the last position a run printed, missing and repeating nothing', async () => {
    const first = await runCli(['changes', '--json', '--limit', '10'], shell);
    expect(first.code, first.stderr).toBe(0);
    const head = documentsOf(first.stdout);
    expect(head).toHaveLength(10);
    const last = head.at(-1)!.position;
    const rest = await runCli(['changes', '--json', '--since', String(last)], shell);
    expect(rest.code, rest.stderr).toBe(0);
    const tail = documentsOf(rest.stdout);
    expect([...head, ...tail].map((document) => document.position)).toEqual(
      followed.map((document) => document.position),
    );
    // The text form: the position first, then the time, the request and the kind.
    const text = await runCli(['changes', '--since', String(last), '--limit', '3'], shell);
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    lines.forEach((line, index) => {
      const document = tail[index]!;
      expect(line.startsWith(`${document.position}  ${document.committed_at}  `), line).toBe(true);
      expect(line).toContain(`  ${document.request_id}  ${document.kind}`);
    });
  });

  it('carries patient names with --include-phi', async () => {
    const result = await runCli(['changes', '--json', '--include-phi', '--limit', '5'], shell);
    expect(result.code, result.stderr).toBe(0);
    const documents = documentsOf(result.stdout);
    for (const document of documents) validator.expectValid(document);
    expect(documents.some((document) => document.request?.patient_last_name)).toBe(true);
  });

  it('refuses bad arguments (exit 2) and a missing database (exit 1) with a clear error', async () => {
    const bad = await runCli(['changes', '--since', 'yesterday'], shell);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^transport-sync: error: --since must be a whole number/m);
    const missing = await runCli(
      ['changes'],
      cleanEnv({ TRANSPORT_DB: '/nonexistent/transport-sync/mirror.db' }),
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^transport-sync: error: /m);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
  });
});
