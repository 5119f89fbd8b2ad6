import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openSqliteDatabase, sqliteAddonPath } from '../../../src/db/sqlite/driver.js';

describe("better-sqlite3's addon by path", () => {
  it("names the addon file in better-sqlite3's own folder, and opens a database with it", () => {
    const path = sqliteAddonPath();
    expect(path).toMatch(
      /[/\\]better-sqlite3[/\\]build[/\\](Release|Debug)[/\\]better_sqlite3\.node$/,
    );
    expect(existsSync(path)).toBe(true);
    const db = openSqliteDatabase(':memory:');
    try {
      expect(db.prepare('SELECT 41 + 1 AS n').get()).toEqual({ n: 42 });
    } finally {
      db.close();
    }
  });
});
