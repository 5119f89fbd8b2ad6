import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVerifier } from '../../../src/webhooks/signature.js';

describe('signature verification', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const check = createVerifier(publicKey);
  const body = Buffer.from('{"event_id":"evt_1"}');
  const good = sign('sha256', body, privateKey).toString('base64');

  it('accepts the signature of the exact bytes, with surrounding white space', () => {
    expect(check(body, good)).toBe(true);
    expect(check(body, ` ${good}\n`)).toBe(true);
  });

  it('refuses a missing, empty, malformed, truncated or foreign signature, and changed bytes', () => {
    expect(check(body, undefined)).toBe(false);
    expect(check(body, '')).toBe(false);
    expect(check(body, 'not base64!')).toBe(false);
    expect(check(body, good.slice(0, 40))).toBe(false);
    expect(check(body, sign('sha256', body, other.privateKey).toString('base64'))).toBe(false);
    expect(check(Buffer.from('{"event_id": "evt_1"}'), good)).toBe(false);
  });
});
