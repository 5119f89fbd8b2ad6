import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// What each command loads: scripts/bundle.mjs writes dist/cli/ (npm test builds it first). The
// bundler names each module it inlines in a comment, `// node_modules/<path>`, and a command's
// chunk is what bin.js imports when it runs.
const CLI = fileURLToPath(new URL('../../dist/cli/', import.meta.url));

/** Fails, saying what to do, when the CLI has not been built. */
function requireBuild(): void {
  if (!existsSync(join(CLI, 'bin.js'))) {
    throw new Error('dist/cli/bin.js is missing: run `npm run build` (npm test does) first');
  }
}

function inlinedModules(): string[] {
  requireBuild();
  return readdirSync(CLI)
    .filter((name) => name.endsWith('.js'))
    .flatMap((name) =>
      [...readFileSync(join(CLI, name), 'utf8').matchAll(/^\/\/ (node_modules\/\S+)$/gm)].map(
        (match) => match[1]!,
      ),
    );
}

/** What loading `entry` loads before any of its code runs: its static imports, transitively. */
function staticallyLoaded(entry: string): { packages: Set<string> } {
  const chunks = new Set<string>();
  const packages = new Set<string>();
  const visit = (name: string) => {
    if (chunks.has(name)) return;
    chunks.add(name);
    const text = readFileSync(join(CLI, name), 'utf8');
    for (const [, from] of text.matchAll(/^import\s(?:[^;]*?\sfrom\s)?["']([^"']+)["']/gm)) {
      if (from!.startsWith('./')) visit(from!.slice(2));
      else packages.add(from!);
    }
    for (const [, path] of text.matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm))
      packages.add(path!);
  };
  visit(entry);
  return { packages };
}

/**
 * The chunk bin.js imports at once, after turning the compile cache on (src/cli/bin.ts): main,
 * which imports each command's chunk when that command runs.
 */
function mainChunk(): string {
  const bin = readFileSync(join(CLI, 'bin.js'), 'utf8');
  const match = /^var \{ main \} = await import\("\.\/([^"]+)"\)/m.exec(bin);
  if (!match) throw new Error('bin.js does not import main');
  return match[1]!;
}

/** What every command loads before its own chunk: bin.js, then main's chunk. */
function entryLoaded(): Set<string> {
  return new Set([
    ...staticallyLoaded('bin.js').packages,
    ...staticallyLoaded(mainChunk()).packages,
  ]);
}

/** The chunk of a command, as main imports it when that command runs. */
function commandChunk(command: string): string {
  const main = readFileSync(join(CLI, mainChunk()), 'utf8');
  const match = new RegExp(
    `^\\s*"?${command}"?: async \\(\\) => \\(await import\\("\\./([^"]+)"\\)\\)`,
    'm',
  ).exec(main);
  if (!match) throw new Error(`main imports no chunk for ${command}`);
  return match[1]!;
}

describe('the CLI bundle', () => {
  it('loads no database driver for a one-shot command until it opens a mirror of that engine', () => {
    requireBuild();
    // The walk does find the packages a command loads.
    expect([...staticallyLoaded(commandChunk('sync')).packages]).toContain('pino');
    // The daemon (`run`) loads the SQLite tools of doctor and backup as it starts, once.
    for (const command of ['sync', 'status', 'accept', 'backfill', 'changes', 'migrate']) {
      const { packages } = staticallyLoaded(commandChunk(command));
      const loaded = [...new Set([...entryLoaded(), ...packages])];
      expect(loaded, command).not.toContain('better-sqlite3');
      expect(loaded, command).not.toContain('pg');
    }
  });

  it("carries zod, and of zod's locales only English, the one its messages use", () => {
    const modules = inlinedModules();
    expect(modules.some((path) => path.startsWith('node_modules/zod/v4/core/'))).toBe(true);
    const locales = new Set(modules.filter((path) => path.includes('/zod/v4/locales/')));
    expect([...locales]).toEqual(['node_modules/zod/v4/locales/en.js']);
  });
});
