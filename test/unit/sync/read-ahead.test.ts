import { describe, expect, it } from 'vitest';
import { readAhead } from '../../../src/sync/pool.js';

describe('readAhead', () => {
  it('asks for the next item while the caller works on the current one, in order', async () => {
    const events: string[] = [];
    async function* pages() {
      for (let page = 1; page <= 3; page += 1) {
        events.push(`fetch ${page}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        yield page;
      }
    }
    const seen: number[] = [];
    for await (const page of readAhead(pages())) {
      events.push(`store ${page}`);
      seen.push(page);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(seen).toEqual([1, 2, 3]);
    // The second page is requested before the first is stored.
    expect(events.indexOf('fetch 2')).toBeLessThan(events.indexOf('store 1') + 1);
    expect(events.indexOf('fetch 2')).toBeLessThan(events.indexOf('store 2'));
  });

  it('leaves a failing prefetch quiet when the caller stops early', async () => {
    async function* pages() {
      yield 1;
      throw new Error('network down');
    }
    let unhandled: unknown;
    const onUnhandled = (reason: unknown) => (unhandled = reason);
    process.on('unhandledRejection', onUnhandled);
    await expect(async () => {
      for await (const page of readAhead(pages())) {
        if (page === 1) throw new Error('stop');
      }
    }).rejects.toThrow('stop');
    await new Promise((resolve) => setTimeout(resolve, 20));
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toBeUndefined();
  });

  it('passes a source error to the caller', async () => {
    async function* pages() {
      yield 1;
      throw new Error('network down');
    }
    const seen: number[] = [];
    await expect(async () => {
      for await (const page of readAhead(pages())) seen.push(page);
    }).rejects.toThrow('network down');
    expect(seen).toEqual([1]);
  });
});
