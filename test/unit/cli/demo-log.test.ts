import { describe, expect, it } from 'vitest';
import { createDemoLogStream, parseLine } from '../../../src/cli/demo-log.js';
import { describeError, TransportError } from '../../../src/errors.js';
import { createLogger } from '../../../src/log.js';

/** A pino root writing into the demo's stream, as `demo` sets it up, and what reached the screen. */
function demoLogger(level = 'warn') {
  const printed: string[] = [];
  const stream = createDemoLogStream((line) => printed.push(line));
  const log = createLogger({ level, destination: stream });
  return { log, stream, printed };
}

describe("the demo's log lines", () => {
  it('are one short line per message, the error message included; repeats are counted, not shown', () => {
    const { log, stream, printed } = demoLogger();
    const gone = new TransportError({
      code: 'api.endpoint_gone',
      message: 'GET requests.list: the service answered 410 for the whole endpoint',
    });
    log
      .child({ area: 'sync' })
      .warn({ err: describeError(gone), state: 'accepted' }, 'list call failed');
    log
      .child({ area: 'sync' })
      .warn({ err: describeError(gone), state: 'awaiting' }, 'list call failed');
    log.error({ err: describeError(new Error('disk I/O error')) }, 'poll cycle failed');
    log.warn({ nextRun: '2026-08-20T10:00:05.000Z' }, 'previous cycle still running; tick skipped');
    log.warn({ nextRun: '2026-08-20T10:00:10.000Z' }, 'previous cycle still running; tick skipped');
    log.info('transport-sync stopped');
    expect(printed).toEqual([
      'warning: list call failed: GET requests.list: the service answered 410 for the whole endpoint\n',
      'error: poll cycle failed: disk I/O error\n',
      'warning: previous cycle still running; tick skipped\n',
    ]);
    expect(stream.hiddenLines()).toBe(2);
  });

  it('leave schema drift to the summary', () => {
    const { log, stream, printed } = demoLogger();
    const drift = log.child({ area: 'schema' });
    drift.warn({ member: 'facility', problem: 'missing' }, 'schema drift: a member differs');
    drift.warn({ member: 'hospice', problem: 'type' }, 'schema drift: a member differs');
    expect(printed).toEqual([]);
    expect(stream.hiddenLines()).toBe(0);
  });

  it('pass text that is not a log line through as it is, a line at a time', () => {
    const printed: string[] = [];
    const stream = createDemoLogStream((line) => printed.push(line));
    stream.write('not json\n{"level":50,"msg":"receiver failed"}\n\n[1,2]\n');
    expect(printed).toEqual(['not json\n', 'error: receiver failed\n', '[1,2]\n']);
  });

  it('read level, message, area and error from a pino line', () => {
    expect(
      parseLine('{"level":40,"area":"webhooks","err":{"message":"EADDRINUSE"},"msg":"listen"}'),
    ).toEqual({ label: 'warning', message: 'listen', area: 'webhooks', error: 'EADDRINUSE' });
    expect(parseLine('{"level":60,"msg":"down"}')).toEqual({ label: 'fatal', message: 'down' });
    expect(parseLine('{"msg":"no level"}')).toBeUndefined();
    expect(parseLine('null')).toBeUndefined();
  });
});
