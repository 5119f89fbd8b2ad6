import { existsSync, mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The import rules of eslint.config.js (import-x/no-cycle, import-x/no-restricted-paths) fail on
// a planted cycle, on a planted db -> sync import and on a planted root -> area import. Nothing
// from src is copied: the cycle is two new files in a folder of its own under src (the cycle rule
// reads the imported files from disk), which eslint.config.js, tsconfig*.json and .gitignore all
// leave out; the db and root files are virtual.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = join(ROOT, 'src/__lint_fixture__');
// One folder per run, so that two runs at once do not remove each other's files.
const RUN_DIR = join(FIXTURES, `run-${process.pid}-${Date.now().toString(36)}`);

function cleanUp(): void {
  rmSync(RUN_DIR, { recursive: true, force: true });
  try {
    rmdirSync(FIXTURES); // only when no other run is using it
  } catch {
    // not empty, or already gone
  }
}

/** Any module of a src area, to import from: the named one while it exists. */
function moduleOf(area: string, preferred: string): string {
  const dir = join(ROOT, 'src', area);
  if (existsSync(join(dir, preferred))) return preferred;
  const first = readdirSync(dir).find((name) => name.endsWith('.ts'));
  if (!first) throw new Error(`src/${area} has no .ts file to import`);
  return first;
}

let eslint: ESLint;

async function print(title: string, results: ESLint.LintResult[]): Promise<void> {
  const formatter = await eslint.loadFormatter('stylish');
  console.log(`${title}\n${await formatter.format(results)}`);
}

function rulesOf(results: ESLint.LintResult[]): (string | null)[] {
  return results.flatMap((result) => result.messages.map((message) => message.ruleId));
}

beforeAll(() => {
  // Cleanup also runs if this process ends without reaching afterAll.
  process.once('exit', cleanUp);
  // ignore: false, so that the config's own `ignores` entry for the fixture folder does not apply.
  eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: join(ROOT, 'eslint.config.js'),
    ignore: false,
  });
  mkdirSync(RUN_DIR, { recursive: true });
  writeFileSync(
    join(RUN_DIR, 'cycle-a.ts'),
    "import { b } from './cycle-b.js';\n\nexport const a = (): number => b() + 1;\n",
  );
  writeFileSync(
    join(RUN_DIR, 'cycle-b.ts'),
    "import { a } from './cycle-a.js';\n\nexport const b = (): number => a() - 1;\n",
  );
});

afterAll(() => {
  cleanUp();
  process.removeListener('exit', cleanUp);
});

describe('the import lint rules', () => {
  it('fail on a two-file import cycle under src', async () => {
    const files = [join(RUN_DIR, 'cycle-a.ts'), join(RUN_DIR, 'cycle-b.ts')];
    const results = await eslint.lintFiles(files);
    await print('planted cycle:', results);

    expect(results.map((result) => result.filePath).sort()).toEqual(files);
    for (const result of results) {
      expect(result.messages.map((message) => message.ruleId)).toEqual(['import-x/no-cycle']);
    }
  });

  it('fail on a db -> sync import', async () => {
    const target = moduleOf('sync', 'normalize.ts').replace(/\.ts$/, '.js');
    const code = `import * as sync from '../sync/${target}';\n\nexport const planted = sync;\n`;
    const results = await eslint.lintText(code, {
      filePath: join(ROOT, 'src/db/__lint_fixture_planted__.ts'),
    });
    await print(`planted db -> sync import (../sync/${target}):`, results);

    expect(rulesOf(results)).toEqual(['import-x/no-restricted-paths']);
    expect(results[0]?.messages[0]?.message).toContain('src/db must not import from src/sync');
  });

  it('fail on a root file importing an area, its error catalog included', async () => {
    const code =
      "import { API_ERROR_CODES } from './api/error-codes.js';\n\nexport const planted = API_ERROR_CODES;\n";
    const results = await eslint.lintText(code, {
      filePath: join(ROOT, 'src/__lint_fixture_planted_root__.ts'),
    });
    await print('planted root -> src/api/error-codes.ts import:', results);

    expect(rulesOf(results)).toEqual(['import-x/no-restricted-paths']);
    expect(results[0]?.messages[0]?.message).toContain('root files of src import only each other');
  });

  it('pass an import that follows the arrows (sync -> db)', async () => {
    const target = moduleOf('db', 'store.ts').replace(/\.ts$/, '.js');
    const code = `import * as db from '../db/${target}';\n\nexport const allowed = db;\n`;
    const results = await eslint.lintText(code, {
      filePath: join(ROOT, 'src/sync/__lint_fixture_allowed__.ts'),
    });

    expect(rulesOf(results)).toEqual([]);
  });
});
