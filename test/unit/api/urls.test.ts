import { describe, expect, it } from 'vitest';
import { apiPath, joinUrl, pathOf, paths, withQuery } from '../../../src/api/urls.js';

describe('joinUrl', () => {
  it.each([
    ['https://x.example', 'openapi/v1.0/requests/', 'https://x.example/openapi/v1.0/requests/'],
    ['https://x.example/', 'openapi/v1.0/requests/', 'https://x.example/openapi/v1.0/requests/'],
    [
      'https://x.example/api',
      'openapi/v1.0/requests/',
      'https://x.example/api/openapi/v1.0/requests/',
    ],
    [
      'https://x.example/api/',
      '/openapi/v1.0/requests/',
      'https://x.example/api/openapi/v1.0/requests/',
    ],
    ['https://x.example/api//', 'v2.0/oauth2/token', 'https://x.example/api/v2.0/oauth2/token/'],
    ['http://127.0.0.1:8080/a/b', 'x//y/', 'http://127.0.0.1:8080/a/b/x/y/'],
  ])('%s + %s', (baseUrl, path, expected) => {
    const url = joinUrl(baseUrl, path);
    expect(url).toBe(expected);
    expect(url.replace(/^https?:\/\//, '')).not.toContain('//');
    expect(url.endsWith('/')).toBe(true);
  });

  it('drops a query or fragment on the base', () => {
    expect(joinUrl('https://x.example/api?x=1#f', 'a/')).toBe('https://x.example/api/a/');
  });

  it('rejects a base that is not a URL', () => {
    expect(() => joinUrl('not a url', 'a/')).toThrow();
  });
});

describe('paths', () => {
  it('percent-encodes id segments so they cannot escape', () => {
    expect(paths.requestDetail('K3J9QX2A')).toBe('openapi/v1.0/requests/K3J9QX2A/');
    expect(paths.accept('XX-ABCD1234')).toBe('openapi/v2.0/requests/XX-ABCD1234/accept/');
    expect(paths.locations('a/b?c#d')).toBe('openapi/v1.0/requests/a%2Fb%3Fc%23d/locations/');
    expect(apiPath`x/${'é'}/`).toBe('x/%C3%A9/');
  });

  it('refuses empty and dot ids', () => {
    expect(() => paths.requestDetail('')).toThrow(RangeError);
    expect(() => paths.requestDetail('..')).toThrow(RangeError);
  });

  it('every path ends with a slash', () => {
    const all = [
      paths.token(),
      paths.accept('a'),
      paths.decline('a'),
      paths.state('a'),
      paths.changeRequest('a'),
      paths.bestTime('a'),
      paths.requests(),
      paths.requestDetail('a'),
      paths.requestDetails(),
      paths.locations('a'),
      paths.account('a'),
    ];
    for (const path of all) expect(path.endsWith('/')).toBe(true);
  });
});

describe('withQuery and pathOf', () => {
  it('builds the query with URLSearchParams and skips undefined', () => {
    const url = withQuery('https://x.example/a/', { a: 1, b: 'x y&z', c: undefined, d: true });
    expect(url).toBe('https://x.example/a/?a=1&b=x+y%26z&d=true');
    expect(withQuery('https://x.example/a/', {})).toBe('https://x.example/a/');
  });

  it('pathOf drops the query', () => {
    expect(pathOf('https://x.example/a/b/?date__gte=1')).toBe('/a/b/');
  });
});
