import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldAccountNames, type AccountName } from '../../../src/mirror/partial-batch.js';

/** The accounts table as the name upsert leaves it: a name that differs replaces, with its time. */
type Accounts = Map<string, { name: string | null; updated_at: string }>;

function upsertName(
  accounts: Accounts,
  { account_id, name, updated_at }: AccountName,
  force = false,
) {
  const stored = accounts.get(account_id);
  if (!stored || force || stored.name !== name) accounts.set(account_id, { name, updated_at });
}

const accountName = fc.record({
  account_id: fc.constantFrom('ORG1', 'ORG2', 'ORG3'),
  name: fc.constantFrom('Mercy Health', 'Mercy', null),
});

describe('foldAccountNames', () => {
  it('writes each account once, ending as writing every name in turn would', () => {
    fc.assert(
      fc.property(
        fc.array(accountName, { maxLength: 3 }),
        fc.array(accountName, { maxLength: 12 }),
        (stored, observed) => {
          const at = (i: number) => `2026-11-26T10:00:${String(i).padStart(2, '0')}.000Z`;
          const seed = (): Accounts => {
            const accounts: Accounts = new Map();
            stored.forEach((a) => upsertName(accounts, { ...a, updated_at: at(0) }));
            return accounts;
          };
          const names = observed.map((a, i) => ({ ...a, updated_at: at(i + 1) }));
          const oneByOne = seed();
          for (const name of names) upsertName(oneByOne, name);
          const folded = foldAccountNames(names);
          const once = seed();
          for (const { name, isForced } of folded) upsertName(once, name, isForced);
          expect(once).toEqual(oneByOne);
          expect(new Set(folded.map((f) => f.name.account_id)).size).toBe(folded.length);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('dates a name changed and changed back by the batch at its return', () => {
    const names: AccountName[] = [
      { account_id: 'ORG1', name: 'Mercy', updated_at: 't1' },
      { account_id: 'ORG1', name: 'Mercy Health', updated_at: 't2' },
      { account_id: 'ORG1', name: 'Mercy Health', updated_at: 't3' },
    ];
    expect(foldAccountNames(names)).toEqual([{ name: names[1], isForced: true }]);
    expect(foldAccountNames(names.slice(1))).toEqual([{ name: names[1], isForced: false }]);
  });
});
