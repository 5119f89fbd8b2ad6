import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reportError } from '../../src/cli/output.js';
import { ERROR_CODES, exitClassOf } from '../../src/error-codes.js';
import { TransportError } from '../../src/errors.js';

const SRC = new URL('../../src/', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && entry.name !== 'error-codes.ts' ? [path] : [];
  });
}

describe('the error catalogs', () => {
  it('list only codes the code raises or matches', () => {
    const text = sources(SRC)
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const unused = Object.keys(ERROR_CODES).filter((code) => !text.includes(`'${code}'`));
    expect(unused).toEqual([]);
  });

  it('end a command with exit 2 for what the operator must fix first, 1 for the rest', () => {
    const io = { stdout: { write: () => true }, stderr: { write: () => true } } as never;
    const exitOf = (code: keyof typeof ERROR_CODES) =>
      reportError(new TransportError({ code, message: 'm' }), io);
    expect(exitOf('config.invalid')).toBe(2);
    expect(exitOf('cli.usage')).toBe(2);
    expect(exitOf('webhook.no_key')).toBe(2);
    expect(exitOf('webhook.tls_invalid')).toBe(2);
    expect(exitOf('db.newer_schema')).toBe(1);
    expect(exitOf('api.network')).toBe(1);
    expect(exitOf('daemon.already_running')).toBe(1);
    expect(exitClassOf('no.such_code')).toBe('failure');
  });
});
