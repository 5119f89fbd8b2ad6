import { describe, expect, it } from 'vitest';
import {
  CONFLICT_ATTEMPTS,
  isWriteConflict,
  retryWriteConflicts,
} from '../../../src/db/conflicts.js';

/** What PostgreSQL reports for a deadlock, as the pg driver hands it on. */
const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
const noPause = async () => undefined;

describe('write conflicts', () => {
  it('knows a deadlock and a serialization failure, on the error or on its cause', () => {
    expect(isWriteConflict(deadlock())).toBe(true);
    expect(isWriteConflict({ code: '40001' })).toBe(true);
    expect(isWriteConflict(new Error('wrapped', { cause: { code: '40P01' } }))).toBe(true);
    expect(isWriteConflict({ code: '23505' })).toBe(false);
    expect(isWriteConflict(null)).toBe(false);
  });

  it('runs work again until it stops losing, at most five times in all', async () => {
    let calls = 0;
    const value = await retryWriteConflicts(async () => {
      calls += 1;
      if (calls < 3) throw deadlock();
      return 'done';
    }, noPause);
    expect([value, calls]).toEqual(['done', 3]);

    calls = 0;
    const always = retryWriteConflicts(async () => {
      calls += 1;
      throw deadlock();
    }, noPause);
    await expect(always).rejects.toThrow('deadlock detected');
    expect(calls).toBe(CONFLICT_ATTEMPTS);
    expect(CONFLICT_ATTEMPTS).toBe(5);
  });

  it('never runs again what failed for another reason', async () => {
    let calls = 0;
    const failing = retryWriteConflicts(async () => {
      calls += 1;
      throw new Error('disk full');
    }, noPause);
    await expect(failing).rejects.toThrow('disk full');
    expect(calls).toBe(1);
  });
});
