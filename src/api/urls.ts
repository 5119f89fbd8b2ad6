/**
 * URL building for the service. The three base addresses come from configuration and may or may
 * not end with `/` or carry a path prefix; every path the service serves ends with `/` and the
 * service rejects paths without it, so all joining happens here and nowhere else.
 */

/** Joins a base address and a relative path with exactly one `/` between them and a trailing `/`. */
export function joinUrl(base: string, path: string): string {
  const url = new URL(base); // throws on a malformed base: configuration validates, this guards
  const prefix = url.pathname.replace(/\/+$/, '');
  const rest = path.replace(/^\/+/, '').replace(/\/{2,}/g, '/');
  const joined = rest === '' ? `${prefix}/` : `${prefix}/${rest}`;
  url.pathname = joined.endsWith('/') ? joined : `${joined}/`;
  url.search = '';
  url.hash = '';
  return url.toString();
}

/** A path from literal parts and id segments; ids are percent-encoded so `/` or `?` cannot escape. */
export function apiPath(parts: TemplateStringsArray, ...ids: string[]): string {
  return parts.reduce(
    (acc, part, index) => acc + part + (index < ids.length ? encodeSegment(ids[index]!) : ''),
    '',
  );
}

function encodeSegment(id: string): string {
  if (id === '' || id === '.' || id === '..') {
    // An empty or dot segment would silently address a different resource.
    throw new RangeError('a request or account id must be a non-empty string other than . or ..');
  }
  return encodeURIComponent(id);
}

/** Appends a query string built with URLSearchParams; undefined values are left out. */
export function withQuery(
  url: string,
  query: Record<string, string | number | boolean | undefined>,
): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.append(key, String(value));
  }
  const search = params.toString();
  return search === '' ? url : `${url}?${search}`;
}

/** The path of a URL without its query string, for logs. */
export function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.split('?')[0] ?? url;
  }
}

/** The service's paths, relative to their base address (auth, hub or base). */
export const paths = {
  token: () => 'v2.0/oauth2/token/',
  accept: (id: string) => apiPath`openapi/v2.0/requests/${id}/accept/`,
  decline: (id: string) => apiPath`openapi/v2.0/requests/${id}/decline/`,
  state: (id: string) => apiPath`openapi/v2.0/requests/${id}/state/`,
  changeRequest: (id: string) => apiPath`openapi/v2.0/requests/${id}/change-request/`,
  bestTime: (id: string) => apiPath`openapi/v2.0/requests/${id}/best-time/`,
  requests: () => 'openapi/v1.0/requests/',
  requestDetail: (id: string) => apiPath`openapi/v1.0/requests/${id}/`,
  requestDetails: () => 'openapi/v1.0/request-details/',
  /** v1.0 location update, on the base address (retired by the service on 2026-08-12). */
  locations: (id: string) => apiPath`openapi/v1.0/requests/${id}/locations/`,
  /** v2.0 location update, on the hub address: same body, limit and answers as v1.0. */
  locationsV2: (id: string) => apiPath`openapi/v2.0/requests/${id}/locations/`,
  account: (id: string) => apiPath`openapi/v1.0/accounts/${id}/`,
} as const;
