import { readFileSync } from 'node:fs';

/** The package version, from package.json at the package root (from src/cli or dist/cli alike). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return String(pkg.version);
}
