import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkFreeSpace, type DiskProbe } from '../../../src/ops/doctor-disk.js';
import { tempDir } from '../../helpers/records.js';

const MiB = 1024 * 1024;

/** A file system with `free` bytes left and a database of `database` bytes. */
function disk(free: number, database = 10 * MiB): DiskProbe {
  return { freeBytes: () => free, sizeOf: (file) => (file.endsWith('.db') ? database : 0) };
}

describe("doctor's free space check", () => {
  const path = join(tempDir(), 'mirror.db');

  it('fails a file system about to fill, and says what to do', () => {
    const result = checkFreeSpace(path, disk(20 * MiB));
    expect(result).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^20 MiB free in /),
    });
    expect(result.hint).toMatch(/Free space on that file system/);
  });

  it('warns below 1 GiB, or below the database size for a large mirror', () => {
    expect(checkFreeSpace(path, disk(500 * MiB)).status).toBe('warn');
    expect(checkFreeSpace(path, disk(2048 * MiB, 3072 * MiB)).status).toBe('warn');
  });

  it('passes with room to spare', () => {
    expect(checkFreeSpace(path, disk(4096 * MiB))).toMatchObject({ status: 'ok' });
  });

  it('reads the real file system of the database folder', () => {
    const result = checkFreeSpace(path);
    expect(result.detail).toMatch(/MiB free in /);
  });

  it('skips PostgreSQL, whose disk is the server', () => {
    expect(checkFreeSpace('postgres://u@127.0.0.1/db').status).toBe('skip');
  });
});
