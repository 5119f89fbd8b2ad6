import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// What every command loads: scripts/bundle.mjs writes dist/cli/ (npm test builds it first). The
// bundler names each module it inlines in a comment, `// node_modules/<path>`.
const CLI = fileURLToPath(new URL('../../dist/cli/', import.meta.url));

function inlinedModules(): string[] {
  if (!existsSync(join(CLI, 'bin.js'))) {
    throw new Error('dist/cli/bin.js is missing: run `npm run build` (npm test does) first');
  }
  return readdirSync(CLI)
    .filter((name) => name.endsWith('.js'))
    .flatMap((name) =>
      [...readFileSync(join(CLI, name), 'utf8').matchAll(/^\/\/ (node_modules\/\S+)$/gm)].map(
        (match) => match[1]!,
      ),
    );
}

describe('the CLI bundle', () => {
  it("carries zod, and of zod's locales only English, the one its messages use", () => {
    const modules = inlinedModules();
    expect(modules.some((path) => path.startsWith('node_modules/zod/v4/core/'))).toBe(true);
    const locales = new Set(modules.filter((path) => path.includes('/zod/v4/locales/')));
    expect([...locales]).toEqual(['node_modules/zod/v4/locales/en.js']);
  });
});
