import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createSourcePolicy } from '../../../src/webhooks/sources.js';

const request = (peer: string, forwarded?: string) =>
  ({
    socket: { remoteAddress: peer },
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  }) as unknown as IncomingMessage;

describe('the source policy', () => {
  it('allows anyone when no allowlist is set, and caps connections per peer, not per proxy', () => {
    const policy = createSourcePolicy({ maxConnectionsPerSource: 2, trustedProxies: ['10.0.0.1'] });
    expect(policy.admit('203.0.113.5')).toBe('admit');
    expect(policy.admit('::ffff:203.0.113.5')).toBe('admit');
    expect(policy.admit('203.0.113.5')).toBe('too_many_connections');
    expect(policy.connections('203.0.113.5')).toBe(2);
    policy.release('203.0.113.5');
    expect(policy.admit('203.0.113.5')).toBe('admit');
    for (let i = 0; i < 10; i += 1) expect(policy.admit('10.0.0.1')).toBe('admit');
    expect(policy.sourceOf(request('198.51.100.1')).isAllowed).toBe(true);
  });

  it('matches IPv4 and IPv6 CIDRs, and IPv4 peers seen on a dual-stack socket', () => {
    const policy = createSourcePolicy({
      allowFrom: ['203.0.113.0/24', '2001:db8::/32', '192.0.2.7'],
      maxConnectionsPerSource: 10,
    });
    expect(policy.admit('203.0.113.200')).toBe('admit');
    expect(policy.admit('::ffff:203.0.113.9')).toBe('admit');
    expect(policy.admit('2001:db8:1::5')).toBe('admit');
    expect(policy.admit('192.0.2.7')).toBe('admit');
    expect(policy.admit('192.0.2.8')).toBe('forbidden');
    expect(policy.admit('2001:db9::1')).toBe('forbidden');
    expect(policy.admit(undefined)).toBe('forbidden');
    expect(policy.sourceOf(request('203.0.114.1'))).toEqual({
      source: '203.0.114.1',
      isAllowed: false,
    });
  });

  it('reads X-Forwarded-For from the right, only from trusted proxies', () => {
    const policy = createSourcePolicy({
      allowFrom: ['203.0.113.0/24'],
      trustedProxies: ['10.0.0.0/8'],
      maxConnectionsPerSource: 10,
    });
    // A chain of two trusted proxies: the first untrusted hop from the right is the source.
    expect(policy.sourceOf(request('10.0.0.1', '203.0.113.4, 10.1.1.1'))).toEqual({
      source: '203.0.113.4',
      isAllowed: true,
    });
    // The client wrote an allowed address on the left; the proxy appended the real one.
    expect(policy.sourceOf(request('10.0.0.1', '203.0.113.4, 198.51.100.9'))).toEqual({
      source: '198.51.100.9',
      isAllowed: false,
    });
    // Not a trusted proxy: its header is ignored.
    expect(policy.sourceOf(request('198.51.100.9', '203.0.113.4')).isAllowed).toBe(false);
    // A trusted proxy that forwards nothing stands for itself.
    expect(policy.sourceOf(request('10.0.0.1')).source).toBe('10.0.0.1');
    expect(policy.sourceOf(request('10.0.0.1', 'garbage')).isAllowed).toBe(false);
  });
});
