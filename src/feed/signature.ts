import { createHmac } from 'node:crypto';
import { TransportError } from '../errors.js';

/*
 * Signatures of the Standard Webhooks specification (1.0), which receivers verify with
 * off-the-shelf libraries: the secret is `whsec_` followed by the base64 of the key; the
 * signature is `v1,` and the base64 of HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`,
 * the timestamp in Unix seconds.
 */

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The key of a `whsec_` secret (surrounding white space ignored); throws feed.secret_invalid. */
export function parseWebhookSecret(text: string, source: string): Buffer {
  const secret = text.trim();
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : '';
  // Keys of 24 to 64 bytes, as the specification recommends; shorter ones are too weak.
  const key = BASE64.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
  if (key.length < 24 || key.length > 64) {
    throw new TransportError({
      code: 'feed.secret_invalid',
      message: `${source} does not hold a webhook secret: whsec_ and the base64 of a 24 to 64 byte key`,
      hint: 'make one with: echo "whsec_$(head -c 32 /dev/urandom | base64)" > secret-file; chmod 600 secret-file',
    });
  }
  return key;
}

/** The three headers that sign `body` as message `id`, sent at `timestampSeconds`. */
export function signatureHeaders(
  key: Buffer,
  id: string,
  timestampSeconds: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const signed = `${id}.${timestampSeconds}.${body}`;
  const signature = createHmac('sha256', key).update(signed).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
