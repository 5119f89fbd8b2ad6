import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadAgent, loadConnector } from '../../src/undici.js';

describe('undici, loaded piecemeal', () => {
  it('gives the same Agent and buildConnector as the package index', () => {
    const index = createRequire(import.meta.url)('undici') as typeof import('undici');
    expect(loadAgent()).toBe(index.Agent);
    expect(loadConnector()).toBe(index.buildConnector);
  });
});
