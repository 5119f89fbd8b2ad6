import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sqliteOf } from '../helpers/engine.js';
import { COMMAND_NAMES } from '../../src/cli/main.js';
import { configMarkdownTable } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/open.js';
import { columnTypesMarkdown } from '../../src/db/schema/docs.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The rows of the markdown tables in `text`, each as its trimmed cells (separator rows left out). */
function cells(text: string): string[][] {
  // Compared cell by cell: a formatter may align the columns.
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[-\s|]+\|$/.test(line))
    .map((line) => line.split(/(?<!\\)\|/).map((cell) => cell.trim()));
}

/** The text of `text` from the heading `heading` to the next heading of the same level. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) return '';
  const level = heading.split(' ')[0];
  const end = text.indexOf(`\n${level} `, start + heading.length + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/**
 * Where database.md explains `table`: its section (a heading naming it, up to the next heading)
 * or its bullet (a line starting with it, up to the next bullet or heading). Empty if none.
 */
function explanationOf(doc: string, table: string): string {
  const lines = doc.split('\n');
  const named = `\`${table}\``;
  const start = lines.findIndex(
    (line) => (line.startsWith('#') && line.includes(named)) || line.startsWith(`- ${named}`),
  );
  if (start < 0) return '';
  const isBullet = lines[start]!.startsWith('- ');
  const end = lines.findIndex(
    (line, index) =>
      index > start && (line.startsWith('#') || (isBullet && line.startsWith('- `'))),
  );
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

describe('docs/configuration.md', () => {
  it('carries the configuration table generated from the settings', () => {
    const doc = read('docs/configuration.md');
    const start = doc.indexOf('<!-- config-table:start');
    const end = doc.indexOf('<!-- config-table:end -->');
    expect(start, 'docs/configuration.md lacks the config-table markers').toBeGreaterThan(-1);
    expect(end, 'docs/configuration.md lacks the config-table markers').toBeGreaterThan(start);
    expect(
      cells(doc.slice(start, end)),
      'regenerate the table in docs/configuration.md: npm run build && node scripts/update-docs.mjs',
    ).toEqual(cells(configMarkdownTable()));
  });
});

describe('docs/database.md', () => {
  it('gives every column its type on each engine, generated from the table descriptions', () => {
    const doc = read('docs/database.md');
    const start = doc.indexOf('<!-- column-types:start');
    const end = doc.indexOf('<!-- column-types:end -->');
    expect(start, 'docs/database.md lacks the column-types markers').toBeGreaterThan(-1);
    expect(
      cells(doc.slice(start, end)),
      'regenerate the column types in docs/database.md: npm run build && node scripts/update-docs.mjs',
    ).toEqual(cells(columnTypesMarkdown()));
  });

  it('documents every table, view and column of a freshly migrated database', async () => {
    // Named where it is explained: the generated table of types alone does not count.
    const full = read('docs/database.md');
    const doc =
      full.slice(0, full.indexOf('<!-- column-types:start')) +
      full.slice(full.indexOf('<!-- column-types:end -->'));
    const db = await openDatabase({ location: ':memory:' });
    const relations = sqliteOf(db)
      .prepare(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%'",
      )
      .all() as { name: string }[];
    const missing: string[] = [];
    for (const { name } of relations) {
      const explained = explanationOf(doc, name);
      if (explained === '') missing.push(name);
      for (const column of sqliteOf(db).prepare(`PRAGMA table_info(${name})`).all() as {
        name: string;
      }[]) {
        if (!explained.includes(`\`${column.name}\``)) missing.push(`${name}.${column.name}`);
      }
    }
    await db.close();
    expect(missing, 'document these in docs/database.md').toEqual([]);
  });
});

describe('the README', () => {
  it('names every command of the CLI in its command table', () => {
    const rows = cells(section(read('README.md'), '## Commands'));
    const commandCells = rows.map((row) => row[1] ?? '');
    const names = [...COMMAND_NAMES, 'help', 'version'];
    const missing = names.filter(
      (name) =>
        !commandCells.some((cell) => new RegExp(`^\`transport-sync ${name}[\\s\`]`).test(cell)),
    );
    expect(missing, "add these to the README's command table").toEqual([]);
  });
});
