import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openedMigratedDatabase } from '../../helpers/engine.js';

/*
 * The SQL the docs give reporting tools and the programs that queue provider actions runs as
 * written on the project's engine: every statement of every ```sql block, on a migrated mirror.
 * (Administration on one engine only, such as creating PostgreSQL roles, is fenced otherwise.)
 */

const ROOT = new URL('../../../', import.meta.url);
const files = [
  'README.md',
  ...readdirSync(new URL('docs/', ROOT)).map((name) => `docs/${name}`),
].filter((file) => file.endsWith('.md'));

/** The statements of each ```sql block of `file`, comments removed. */
function statements(file: string): string[] {
  const text = readFileSync(new URL(file, ROOT), 'utf8');
  const blocks = [...text.matchAll(/```sql\n([\s\S]*?)```/g)].map((match) => match[1]!);
  return blocks
    .flatMap((block) => block.replace(/--[^\n]*/g, '').split(';'))
    .map((statement) => statement.trim())
    .filter(Boolean);
}

const examples = files.flatMap((file) => statements(file).map((sql) => ({ file, sql })));

const { db } = openedMigratedDatabase();

describe('the SQL in the docs', () => {
  it('has examples to check', () => {
    expect(examples.length).toBeGreaterThan(8);
  });

  it.each(examples)('$file: $sql', async ({ sql }) => {
    await db().transaction((s) => s.run(sql));
  });
});
