import { describe, expect, it } from 'vitest';
import { createSharedWrittenCache } from '../../../src/db/store/written-cache.js';

describe('the cache of accounts and facilities written', () => {
  it('keeps what a transaction wrote to itself until it commits', () => {
    const shared = createSharedWrittenCache();
    const first = shared.begin();
    const beside = shared.begin();
    first.set('account:A', 'v1');
    expect(first.get('account:A')).toBe('v1');
    expect(beside.get('account:A')).toBeUndefined();
    first.commit();
    expect(beside.get('account:A')).toBe('v1');
    expect(shared.begin().get('account:A')).toBe('v1');
  });

  it('drops a rolled-back transaction unmerged', () => {
    const shared = createSharedWrittenCache();
    shared.begin().set('account:A', 'v1');
    expect(shared.begin().get('account:A')).toBeUndefined();
  });

  it('after a savepoint rolled back, trusts nothing the transaction wrote, and forgets it at commit', () => {
    const shared = createSharedWrittenCache();
    const before = shared.begin();
    before.set('account:A', 'v0');
    before.commit();
    const tx = shared.begin();
    tx.set('account:A', 'v1');
    tx.set('facility:F', 'f1');
    tx.distrustPending();
    expect(tx.get('account:A')).toBeUndefined();
    expect(tx.get('facility:F')).toBeUndefined();
    tx.commit();
    expect(shared.begin().get('account:A')).toBeUndefined();
  });

  it('forgets an entry another write changed, once that write commits', () => {
    const shared = createSharedWrittenCache();
    const writer = shared.begin();
    writer.set('account:A', 'v1');
    writer.commit();
    const renamer = shared.begin();
    renamer.forget('account:A');
    expect(renamer.get('account:A')).toBeUndefined();
    expect(shared.begin().get('account:A')).toBe('v1');
    renamer.commit();
    expect(shared.begin().get('account:A')).toBeUndefined();
  });

  it('merges commits in the order they happen', () => {
    const shared = createSharedWrittenCache();
    const a = shared.begin();
    const b = shared.begin();
    a.set('account:A', 'from a');
    b.set('account:A', 'from b');
    b.commit();
    a.commit();
    expect(shared.begin().get('account:A')).toBe('from a');
  });
});
