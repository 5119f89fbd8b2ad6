import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, createRateLimitedLogger } from '../../src/log.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const text: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text.push(String(chunk));
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        try {
          lines.push(JSON.parse(line));
        } catch {
          // pretty output is not JSON
        }
      }
      done();
    },
  });
  return { lines, text, stream };
}

describe('the rate-limited logger', () => {
  it('logs an identical error once per interval and reports how many it dropped', () => {
    const out = capture();
    let now = 0;
    const log = createRateLimitedLogger(createLogger({ destination: out.stream }), {
      intervalMs: 60_000,
      now: () => now,
    });
    const err = { code: 'api.network', message: 'GET token: network error' };
    expect(log.error({ err }, 'cycle failed')).toBe(true);
    for (let i = 0; i < 10; i += 1) {
      now += 5000;
      log.error({ err }, 'cycle failed');
    }
    // A different error is a different line.
    log.error({ err: { code: 'api.timeout', message: 'timed out' } }, 'cycle failed');
    now = 61_000;
    expect(log.error({ err }, 'cycle failed')).toBe(true);
    expect(
      out.lines.map((line) => [line.msg, (line.err as { code: string }).code, line.suppressed]),
    ).toEqual([
      ['cycle failed', 'api.network', undefined],
      ['cycle failed', 'api.timeout', undefined],
      ['cycle failed', 'api.network', 10],
    ]);
  });

  it('keys lines by an explicit key when given', () => {
    const out = capture();
    const log = createRateLimitedLogger(createLogger({ destination: out.stream }), {
      now: () => 0,
    });
    log.warn({ requestId: 'A' }, 'detail fetch failed', 'detail');
    log.warn({ requestId: 'B' }, 'detail fetch failed', 'detail');
    expect(out.lines).toHaveLength(1);
  });
});

describe('the log format', () => {
  it('writes JSON lines to a pipe and readable text when asked to be pretty, redacting both', () => {
    const json = capture();
    createLogger({ destination: json.stream }).info({ clientSecret: 's3cret' }, 'hello');
    expect(json.lines[0]).toMatchObject({ msg: 'hello', clientSecret: '[redacted]' });

    const pretty = capture();
    createLogger({ destination: pretty.stream, pretty: true }).info(
      { clientSecret: 's3cret', area: 'api' },
      'hello',
    );
    const text = pretty.text.join('');
    expect(text).toMatch(/INFO.*hello/);
    expect(text).not.toContain('s3cret');
    expect(() => JSON.parse(text)).toThrow();
  });

  it('turns pretty by itself when the destination is a terminal', () => {
    const tty = capture();
    Object.assign(tty.stream, { isTTY: true });
    createLogger({ destination: tty.stream }).warn('careful');
    expect(tty.lines).toEqual([]);
    expect(tty.text.join('')).toMatch(/WARN.*careful/);
  });
});
