import { describe, expect, it } from 'vitest';
import { planChunks, pollWindow, type TimeWindow } from '../../../src/sync/window.js';

const HOUR = 3_600_000;
const window: TimeWindow = { fromMs: Date.UTC(2026, 10, 1), toMs: Date.UTC(2026, 10, 2) };

/** Chunks must cover the window with no hole: each starts where the last one ended. */
function expectContiguous(chunks: TimeWindow[]): void {
  expect(chunks[0]!.fromMs).toBe(window.fromMs);
  expect(chunks.at(-1)!.toMs).toBe(window.toMs);
  for (let i = 1; i < chunks.length; i += 1) expect(chunks[i]!.fromMs).toBe(chunks[i - 1]!.toMs);
}

describe('pollWindow', () => {
  it('reaches the past and future hours around now', () => {
    const now = Date.UTC(2026, 10, 25, 12);
    expect(pollWindow(now, 72, 336)).toEqual({ fromMs: now - 72 * HOUR, toMs: now + 336 * HOUR });
  });
});

describe('planChunks', () => {
  it('keeps a quiet window, or one at exactly the target, as one chunk', () => {
    expect(planChunks(window, [], 100)).toEqual([window]);
    const times = Array.from({ length: 100 }, (_, i) => window.fromMs + i * 60_000);
    expect(planChunks(window, times, 100)).toEqual([window]);
  });

  it('ignores stored times outside the window', () => {
    const outside = Array.from({ length: 500 }, (_, i) => window.toMs + 1 + i);
    expect(planChunks(window, outside, 10)).toEqual([window]);
  });

  it('splits on whole seconds so that no chunk expects more than the target, covering the window', () => {
    const times = Array.from({ length: 1000 }, (_, i) => window.fromMs + i * 60_500 + 250);
    const chunks = planChunks(window, times, 100);
    expect(chunks).toHaveLength(10);
    expectContiguous(chunks);
    for (const chunk of chunks) {
      expect(chunk.toMs % 1000).toBe(0);
      // Both ends inclusive: a request on the shared boundary second is listed by both.
      const inside = times.filter((t) => t >= chunk.fromMs && t <= chunk.toMs + 999);
      expect(inside.length).toBeLessThanOrEqual(101);
    }
  });

  it('keeps many requests of one second together rather than split inside it', () => {
    const second = window.fromMs + 5 * HOUR;
    const times = [
      ...Array.from({ length: 50 }, (_, i) => window.fromMs + i * 1000),
      ...Array.from({ length: 300 }, (_, i) => second + (i % 1000)),
    ];
    const chunks = planChunks(window, times, 100);
    expectContiguous(chunks);
    expect(chunks.map((c) => c.toMs)).toContain(second);
    expect(chunks.filter((c) => c.fromMs === second)).toHaveLength(1);
  });
});
