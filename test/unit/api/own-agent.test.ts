import { describe, expect, it } from 'vitest';
import { DEFAULT_TIMEOUTS, needsOwnPool } from '../../../src/api/http.js';

describe('the connection pool of the HTTP layer', () => {
  it("is Node's own fetch dispatcher with the default limits, whatever the attempt's timers", () => {
    expect(needsOwnPool(DEFAULT_TIMEOUTS)).toBe(false);
    expect(
      needsOwnPool({ ...DEFAULT_TIMEOUTS, headersMs: 5_000, bodyMs: 5_000, attemptMs: 10_000 }),
    ).toBe(false);
  });

  it("is an Agent of its own for a connect or keep-alive limit other than Node's", () => {
    expect(needsOwnPool({ ...DEFAULT_TIMEOUTS, connectMs: 5_000 })).toBe(true);
    expect(needsOwnPool({ ...DEFAULT_TIMEOUTS, keepAliveMs: 1_000 })).toBe(true);
  });
});
