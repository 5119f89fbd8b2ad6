import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/** TRANSPORT_WEBHOOK_MAX_CONNECTIONS_PER_SOURCE's default. */
export const DEFAULT_MAX_CONNECTIONS_PER_SOURCE = 256;

/** Who may deliver webhooks, and how many connections one peer may hold. */
export interface SourcePolicy {
  /**
   * At accept, before a byte is read: 'too_many_connections' when the peer already holds its
   * cap (the connection is not counted), else the connection is counted against the peer until
   * `release`, and 'forbidden' says the peer is outside the allowlist.
   */
  admit(peer: string | undefined): 'admit' | 'forbidden' | 'too_many_connections';
  /** A connection that `admit` counted closed: it no longer counts against the peer's cap. */
  release(peer: string | undefined): void;
  /**
   * For a request that came through: the source it is from (the peer, or for a trusted proxy the
   * nearest untrusted X-Forwarded-For address), or null when that source is not allowed.
   */
  sourceOf(req: IncomingMessage): { source: string; isAllowed: boolean };
  /** Open connections per peer, for tests and diagnostics. */
  connections(peer: string): number;
}

/**
 * The receiver's source rules. TRANSPORT_WEBHOOK_ALLOW_FROM (unset: anyone) is checked at accept
 * against the peer address, except for a trusted proxy, whose requests are checked one by one
 * against the address its X-Forwarded-For names. TRANSPORT_TRUSTED_PROXIES (unset: nobody) says
 * whose X-Forwarded-For is believed; a proxy carries many sources, so it has no connection cap.
 */
export function createSourcePolicy({
  allowFrom,
  trustedProxies,
  maxConnectionsPerSource,
}: {
  allowFrom?: readonly string[] | undefined;
  trustedProxies?: readonly string[] | undefined;
  maxConnectionsPerSource: number;
}): SourcePolicy {
  const allowed = allowFrom?.length ? blockListOf(allowFrom) : null;
  const proxies = trustedProxies?.length ? blockListOf(trustedProxies) : null;
  const open = new Map<string, number>();
  const isProxy = (address: string) => proxies !== null && matches(proxies, address);
  const isAllowed = (address: string) => allowed === null || matches(allowed, address);

  return {
    admit(peer) {
      const address = normalize(peer);
      if (isProxy(address)) return 'admit';
      const count = open.get(address) ?? 0;
      if (count >= maxConnectionsPerSource) return 'too_many_connections';
      open.set(address, count + 1);
      return isAllowed(address) ? 'admit' : 'forbidden';
    },
    release(peer) {
      const address = normalize(peer);
      const count = open.get(address);
      if (count === undefined) return;
      if (count <= 1) open.delete(address);
      else open.set(address, count - 1);
    },
    sourceOf(req) {
      const peer = normalize(req.socket.remoteAddress);
      if (!isProxy(peer)) return { source: peer, isAllowed: isAllowed(peer) };
      const source = forwardedSource(req, isProxy) ?? peer;
      return { source, isAllowed: isAllowed(source) };
    },
    connections(peer) {
      return open.get(normalize(peer)) ?? 0;
    },
  };
}

/**
 * The address X-Forwarded-For names, read from the right: each trusted proxy appends the address
 * it received from, so the first entry from the right that is not a trusted proxy is the source.
 * Entries further left were written by the client itself and prove nothing.
 */
function forwardedSource(
  req: IncomingMessage,
  isProxy: (address: string) => boolean,
): string | null {
  const header = req.headers['x-forwarded-for'];
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!text) return null;
  const hops = text
    .split(',')
    .map((hop) => normalize(hop.trim()))
    .filter((hop) => isIP(hop) !== 0);
  for (let index = hops.length - 1; index >= 0; index -= 1) {
    const hop = hops[index]!;
    if (!isProxy(hop)) return hop;
  }
  return hops[0] ?? null;
}

function blockListOf(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', bits] = cidr.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

function matches(list: BlockList, address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** An IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d; CIDRs name it as a.b.c.d. */
function normalize(address: string | undefined): string {
  if (!address) return '';
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? mapped[1]! : address;
}
