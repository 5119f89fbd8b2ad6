import { describe, expect, it } from 'vitest';
import { sharingReads, type FeedPage, type FeedReader } from '../../../src/feed/reader.js';

/** A reader whose reads wait until the test settles them, counting what was asked. */
function pendingReader() {
  const asked: string[] = [];
  const settle: (() => void)[] = [];
  const reader: FeedReader = {
    readAfter(after, limit) {
      asked.push(`${after}:${limit}`);
      const page: FeedPage = { changes: [], overviews: new Map() };
      return new Promise((resolve) => settle.push(() => resolve(page)));
    },
  };
  return { reader, asked, settleAll: () => settle.splice(0).forEach((resolve) => resolve()) };
}

describe('sharingReads', () => {
  it('shares a read of the same page that is running, and reads again once it is done', async () => {
    const { reader, asked, settleAll } = pendingReader();
    const shared = sharingReads(reader);
    // Three publishers woken by one commit ask for the same page; one asks for another.
    const same = [shared.readAfter(10, 100), shared.readAfter(10, 100), shared.readAfter(10, 100)];
    const other = shared.readAfter(12, 100);
    expect(asked).toEqual(['10:100', '12:100']);
    settleAll();
    const pages = await Promise.all(same);
    expect(pages[1]).toBe(pages[0]);
    await other;
    // Done: the next ask for that page reads it afresh (new changes may have committed).
    const again = shared.readAfter(10, 100);
    expect(asked).toEqual(['10:100', '12:100', '10:100']);
    settleAll();
    await again;
  });

  it('lets a failed read fail every caller that shared it, and the next ask read again', async () => {
    let calls = 0;
    const shared = sharingReads({
      readAfter: () => {
        calls += 1;
        return Promise.reject(new Error('connection lost'));
      },
    });
    const results = await Promise.allSettled([shared.readAfter(0, 5), shared.readAfter(0, 5)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    await expect(shared.readAfter(0, 5)).rejects.toThrow('connection lost');
    expect(calls).toBe(2);
  });
});
