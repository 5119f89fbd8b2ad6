import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, exitClassOf, reportError } from '../../src/cli/output.js';
import type { ErrorCode } from '../../src/error-codes.js';
import { TransportError } from '../../src/errors.js';

const SRC = new URL('../../src/', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && entry.name !== 'error-codes.ts' ? [path] : [];
  });
}

/** Each area's catalog file, src/<area>/error-codes.ts. */
function catalogFiles(): { area: string; path: string }[] {
  return readdirSync(SRC, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({ area: entry.name, path: join(SRC, entry.name, 'error-codes.ts') }))
    .filter(({ path }) => existsSync(path));
}

describe('the error catalogs', () => {
  it('list only codes the code raises or matches', () => {
    const text = sources(SRC)
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const unused = Object.keys(ERROR_CODES).filter((code) => !text.includes(`'${code}'`));
    expect(unused).toEqual([]);
  });

  it('are every one merged for the exit codes, and registered with the root', async () => {
    const files = catalogFiles();
    expect(files.map(({ area }) => area).sort()).toEqual([
      'api',
      'cli',
      'config',
      'daemon',
      'db',
      'feed',
      'ops',
      'outbox',
      'simulator',
      'webhooks',
    ]);
    const merged: Record<string, string> = { ...ERROR_CODES };
    for (const { area, path } of files) {
      const module = (await import(path)) as Record<string, Record<string, string>>;
      const catalogs = Object.values(module);
      expect(catalogs, path).toHaveLength(1);
      for (const [code, exitClass] of Object.entries(catalogs[0]!)) {
        expect(merged[code], `${code} of ${path}`).toBe(exitClass);
      }
      // Registered with the root: else the area's codes are no ErrorCode (its raises fail tsc).
      expect(readFileSync(path, 'utf8')).toMatch(
        new RegExp(
          `declare module '\\.\\./error-codes\\.js'[^]*interface ErrorCatalogs[^]*\\b${area}:`,
        ),
      );
    }
  });

  it('end a command with exit 2 for what the operator must fix first, 1 for the rest', () => {
    const io = { stdout: { write: () => true }, stderr: { write: () => true } } as never;
    const exitOf = (code: ErrorCode) => reportError(new TransportError({ code, message: 'm' }), io);
    expect(exitOf('config.invalid')).toBe(2);
    expect(exitOf('cli.usage')).toBe(2);
    expect(exitOf('webhook.no_key')).toBe(2);
    expect(exitOf('webhook.tls_invalid')).toBe(2);
    expect(exitOf('db.newer_schema')).toBe(1);
    expect(exitOf('api.network')).toBe(1);
    expect(exitOf('daemon.already_running')).toBe(1);
    expect(exitClassOf('no.such_code')).toBe('failure');
  });

  it('give exit 2 to exactly these codes (a public interface: scripts rely on it)', () => {
    const usage = Object.entries(ERROR_CODES)
      .filter(([, exitClass]) => exitClass === 'usage')
      .map(([code]) => code)
      .sort();
    expect(usage).toEqual([
      'backup.postgres',
      'cli.invalid_argument',
      'cli.usage',
      'config.env_file',
      'config.invalid',
      'copy.engines',
      'db.folder_missing',
      'feed.file_unreadable',
      'feed.no_secret',
      'feed.secret_invalid',
      'webhook.key_invalid',
      'webhook.key_unreadable',
      'webhook.no_key',
      'webhook.tls_invalid',
      'webhook.tls_unreadable',
    ]);
    expect(Object.keys(ERROR_CODES)).toHaveLength(61);
  });
});
