/**
 * Access tokens: JWT-shaped (header.payload.signature, base64url, HS256 over a per-simulator key)
 * so a client that peeks at `exp` works, but validity is decided only by the server's own map of
 * token to expiry, read against the injected clock.
 */
import { createHmac } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { Random } from './random.js';

/** Issues and checks access tokens. */
export interface TokenIssuer {
  /** A new token for `clientId`, valid for the configured lifetime from clock now. */
  issue(clientId: string): { token: string; expiresInSec: number };
  /** True when `token` was issued here and has not expired. */
  isValid(token: string): boolean;
  /** Every token issued so far, oldest first. */
  issued(): string[];
}

const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/** A token issuer with lifetime `ttlSec`; `rng` makes token ids reproducible. */
export function createTokenIssuer({
  clock,
  rng,
  ttlSec,
}: {
  clock: Clock;
  rng: Random;
  ttlSec: number;
}): TokenIssuer {
  const key = rng.alnum(32);
  const expiries = new Map<string, number>();
  return {
    issue(clientId) {
      const nowMs = clock.now();
      const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
      const payload = b64url(
        JSON.stringify({
          iss: 'transport-sync-simulator',
          sub: clientId,
          iat: Math.floor(nowMs / 1000),
          exp: Math.floor(nowMs / 1000) + ttlSec,
          jti: rng.uuid(),
        }),
      );
      const signature = b64url(createHmac('sha256', key).update(`${header}.${payload}`).digest());
      const token = `${header}.${payload}.${signature}`;
      expiries.set(token, nowMs + ttlSec * 1000);
      return { token, expiresInSec: ttlSec };
    },
    isValid(token) {
      const expiresAt = expiries.get(token);
      return expiresAt !== undefined && clock.now() < expiresAt;
    },
    issued: () => [...expiries.keys()],
  };
}
