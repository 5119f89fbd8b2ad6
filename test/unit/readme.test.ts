import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configMarkdownTable } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/open.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('the README', () => {
  it('carries the configuration table generated from the settings', () => {
    // Compared cell by cell: a formatter may align the columns.
    const cells = (table: string) =>
      table
        .split('\n')
        .filter((line) => line.startsWith('|') && !/^\|[-\s|]+\|$/.test(line))
        .map((line) => line.split(/(?<!\\)\|/).map((cell) => cell.trim()));
    const section = readme.slice(
      readme.indexOf('<!-- config-table:start'),
      readme.indexOf('<!-- config-table:end -->'),
    );
    expect(cells(section), 'regenerate with: transport-sync help config --markdown').toEqual(
      cells(configMarkdownTable()),
    );
  });

  it('documents every column a reporting tool sees', () => {
    const db = openDatabase({ path: ':memory:' });
    const relations = db.sqlite
      .prepare(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%'",
      )
      .all() as { name: string }[];
    const missing: string[] = [];
    for (const { name } of relations) {
      if (!readme.includes(`\`${name}\``)) missing.push(name);
      for (const column of db.sqlite.prepare(`PRAGMA table_info(${name})`).all() as {
        name: string;
      }[]) {
        if (!readme.includes(column.name)) missing.push(`${name}.${column.name}`);
      }
    }
    db.close();
    expect(missing).toEqual([]);
  });
});
