import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * A receiver's check of a Standard Webhooks (1.0) delivery, written here from the specification
 * and nothing of src/feed: the key is the base64 after `whsec_`; the signed content is
 * `{webhook-id}.{webhook-timestamp}.{raw body}`; `webhook-signature` holds space-separated
 * `v1,<base64 HMAC-SHA256>` entries, any one of which may match; a timestamp more than five
 * minutes from now is refused (replay).
 */

/** Why a delivery fails the check, or null when it passes. */
export function standardWebhookProblem(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): string | null {
  const header = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !timestamp || !signatures) return 'a webhook-* header is missing';
  if (!/^\d+$/.test(timestamp)) return 'webhook-timestamp is not Unix seconds';
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return 'webhook-timestamp is too far off';
  if (!secret.startsWith('whsec_')) return 'the secret has no whsec_ prefix';
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  for (const entry of signatures.split(' ')) {
    const [version, encoded] = entry.split(',', 2);
    if (version !== 'v1' || !encoded) continue;
    const given = Buffer.from(encoded, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return null;
  }
  return 'no v1 signature matches';
}
