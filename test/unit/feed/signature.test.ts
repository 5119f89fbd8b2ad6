import { describe, expect, it } from 'vitest';
import { parseWebhookSecret, signatureHeaders } from '../../../src/feed/signature.js';
import { isTransportError } from '../../../src/errors.js';
import { standardWebhookProblem } from '../../helpers/standard-webhooks.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('Standard Webhooks signatures', () => {
  it('match the known example: this secret, id, timestamp and body', () => {
    const headers = signatureHeaders(
      parseWebhookSecret(SECRET, 'test'),
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('pass a receiver check written from the specification, and fail it once anything changes', () => {
    const key = parseWebhookSecret(`  ${SECRET}\n`, 'test');
    const body = JSON.stringify({ position: 42, request_id: 'K3J9QX2A' });
    const now = 1_790_000_000;
    const headers = signatureHeaders(key, '42', now, body);
    expect(standardWebhookProblem(SECRET, headers, body, now)).toBeNull();
    expect(standardWebhookProblem(SECRET, headers, `${body} `, now)).toMatch(/no v1/);
    expect(standardWebhookProblem(SECRET, { ...headers, 'webhook-id': '43' }, body, now)).toMatch(
      /no v1/,
    );
    expect(standardWebhookProblem(SECRET, headers, body, now + 600)).toMatch(/too far/);
    const other = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    expect(standardWebhookProblem(other, headers, body, now)).toMatch(/no v1/);
  });

  it.each([
    ['no prefix', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['not base64', 'whsec_not base64 at all!!'],
    ['a key too short', `whsec_${Buffer.alloc(8, 1).toString('base64')}`],
    ['empty', ''],
  ])('refuse a secret with %s, naming the setting and never echoing it', (_why, text) => {
    let thrown: unknown;
    try {
      parseWebhookSecret(text, 'TRANSPORT_FEED_WEBHOOK_SECRET_FILE');
    } catch (error) {
      thrown = error;
    }
    expect(isTransportError(thrown, 'feed.secret_invalid')).toBe(true);
    const message = (thrown as Error).message;
    expect(message).toContain('TRANSPORT_FEED_WEBHOOK_SECRET_FILE');
    if (text.length > 6) expect(message).not.toContain(text.slice(6));
  });
});
