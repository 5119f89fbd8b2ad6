import { describe, expect, it } from 'vitest';
import { parseListen } from '../../../src/webhooks/index.js';

describe('listen addresses', () => {
  it('takes host:port, [v6]:port or a bare port on 127.0.0.1', () => {
    expect(parseListen('8787')).toEqual({ host: '127.0.0.1', port: 8787 });
    expect(parseListen('0.0.0.0:9000')).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(parseListen('[::1]:9000')).toEqual({ host: '::1', port: 9000 });
    expect(() => parseListen('host:99999')).toThrow(/host:port/);
    expect(() => parseListen(undefined)).toThrow(/not set/);
  });
});
