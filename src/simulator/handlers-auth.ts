/**
 * The token endpoint and the bearer check. Client credentials come form-encoded (the spec), or
 * as HTTP Basic (the OAuth 2.0 default), and are compared in constant time.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Handler, HandlerContext } from './context.js';
import { json } from './http.js';

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function basicCredentials(headers: IncomingHttpHeaders): { id: string; secret: string } | null {
  const match = /^Basic\s+(.+)$/i.exec(headers.authorization ?? '');
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon)),
      secret: decodeURIComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return null;
  }
}

/** `POST /v2.0/oauth2/token/`: client credentials grant. */
export const handleToken: Handler = (ctx, req) => {
  const form = new URLSearchParams(req.body);
  const basic = basicCredentials(req.headers);
  const id = form.get('client_id') ?? basic?.id ?? '';
  const secret = form.get('client_secret') ?? basic?.secret ?? '';
  // Client authentication first, so a caller without credentials learns nothing else.
  if (!sameText(id, ctx.clientId) || !sameText(secret, ctx.clientSecret)) {
    return json(401, {
      error: 'invalid_client',
      error_description: 'Client authentication failed.',
    });
  }
  const grant = form.get('grant_type');
  if (grant === null || grant === '') {
    return json(400, {
      error: 'invalid_request',
      error_description: 'Missing grant_type parameter.',
    });
  }
  if (grant !== 'client_credentials') {
    return json(400, {
      error: 'unsupported_grant_type',
      error_description: `Unsupported grant type: ${grant}.`,
    });
  }
  const { token, expiresInSec } = ctx.tokens.issue(id);
  return json(
    200,
    { access_token: token, token_type: 'bearer', expires_in: expiresInSec },
    { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
  );
};

/** True when the request carries a valid, unexpired bearer token. */
export function isAuthenticated(ctx: HandlerContext, headers: IncomingHttpHeaders): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return match?.[1] !== undefined && ctx.tokens.isValid(match[1]);
}
