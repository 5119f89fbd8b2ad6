import { createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createSimulatorCommand } from '../../../src/cli/simulator.js';
import { tempDir } from '../../helpers/records.js';

let receiver: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  receiver = undefined;
});

function io() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return { io: { stdout, stderr, env: {} }, out: () => out };
}

describe('transport-sync simulator --webhook-url', () => {
  it('signs each delivery with a key whose public half it writes to --webhook-public-key-file', async () => {
    const deliveries: { body: Buffer; signature: string | undefined }[] = [];
    let onDelivery = () => undefined as void;
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        deliveries.push({
          body: Buffer.concat(chunks),
          signature: req.headers['x-vectorcare-signature'] as string | undefined,
        });
        res.writeHead(200).end('{}');
        onDelivery();
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/`;
    const keyFile = join(tempDir(), 'sim-public.pem');
    const { io: cliIo, out } = io();

    const command = createSimulatorCommand(async () => {
      const simUrl = /listening on (\S+)/.exec(out())![1]!;
      const arrived = new Promise<void>((resolve) => {
        onDelivery = () => (deliveries.length >= 5 ? resolve() : undefined);
      });
      await fetch(`${simUrl}/_sim/mutate/?count=5`, { method: 'POST' });
      await arrived;
    });
    const code = await command.run(
      [
        '--port',
        '0',
        '--requests',
        '30',
        '--webhook-url',
        url,
        '--webhook-public-key-file',
        keyFile,
      ],
      cliIo,
    );
    expect(code).toBe(0);
    expect(out()).toContain(`sending webhooks to ${url}`);
    const key = createPublicKey(readFileSync(keyFile, 'utf8'));
    expect(deliveries.length).toBeGreaterThanOrEqual(5);
    for (const delivery of deliveries) {
      expect(verify('sha256', delivery.body, key, Buffer.from(delivery.signature!, 'base64'))).toBe(
        true,
      );
      const event = JSON.parse(delivery.body.toString()) as Record<string, unknown>;
      expect(event).toMatchObject({ event_id: expect.stringMatching(/^evt_\d{15}_\d{9}$/) });
      expect(Object.keys(event)).toEqual([
        'event_id',
        'event_timestamp',
        'service_request_id',
        'request_status',
        'action',
        'data',
      ]);
    }
  });

  it('retries on the schedule of --webhook-retry-delays-ms, then gives the event up', async () => {
    // Every attempt fails: each event is tried once per delay in the list, then lost.
    const attemptsAt = new Map<string, number[]>();
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const { event_id: id } = JSON.parse(Buffer.concat(chunks).toString()) as {
          event_id: string;
        };
        attemptsAt.set(id, [...(attemptsAt.get(id) ?? []), performance.now()]);
        res.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/`;
    const { io: cliIo, out } = io();
    let report: { stats: { events: number; attempts: number; lost: number } } | undefined;

    const command = createSimulatorCommand(async () => {
      const simUrl = /listening on (\S+)/.exec(out())![1]!;
      await fetch(`${simUrl}/_sim/mutate/?count=1`, { method: 'POST' });
      // Until every event is given up (the service's schedule would take 72 s: past the timeout).
      for (;;) {
        report = (await (await fetch(`${simUrl}/_sim/webhooks/`)).json()) as typeof report;
        if (report!.stats.events > 0 && report!.stats.lost === report!.stats.events) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const code = await command.run(
      [
        '--port',
        '0',
        '--requests',
        '30',
        '--webhook-url',
        url,
        '--webhook-public-key-file',
        join(tempDir(), 'sim-public.pem'),
        '--webhook-retry-delays-ms',
        '0,150,400',
      ],
      cliIo,
    );
    expect(code).toBe(0);
    expect(out()).toContain('waits before each attempt: 0, 150, 400 ms');
    expect(report!.stats.attempts).toBe(3 * report!.stats.events);
    expect(attemptsAt.size).toBe(report!.stats.events);
    for (const [id, times] of attemptsAt) {
      expect(times, id).toHaveLength(3);
      const [first, second, third] = times as [number, number, number];
      // Each wait runs from the attempt before it; far below the service's 8 s and 64 s.
      expect(second - first).toBeGreaterThanOrEqual(140);
      expect(third - second).toBeGreaterThanOrEqual(390);
      expect(third - first).toBeLessThan(8_000);
    }
  });

  it('refuses a retry schedule that is not a list of whole milliseconds, or has no --webhook-url', async () => {
    const command = createSimulatorCommand(async () => undefined);
    const withUrl = ['--webhook-url', 'http://127.0.0.1:1/', '--webhook-public-key-file', 'k.pem'];
    for (const list of ['', '0,,8000', '0,8s', '-1,8000', '0,3600001', '0,1,2,3,4,5,6,7,8,9,10']) {
      await expect(
        command.run([...withUrl, `--webhook-retry-delays-ms=${list}`], io().io),
        list,
      ).rejects.toMatchObject({
        code: 'cli.usage',
        message: expect.stringContaining('--webhook-retry-delays-ms must be'),
      });
    }
    await expect(
      command.run(['--webhook-retry-delays-ms', '0,100'], io().io),
    ).rejects.toMatchObject({ code: 'cli.usage', message: expect.stringContaining('needs') });
  });

  it('refuses --webhook-url without a key file, and a URL that is not http(s)', async () => {
    const command = createSimulatorCommand(async () => undefined);
    await expect(
      command.run(['--webhook-url', 'http://127.0.0.1:1/'], io().io),
    ).rejects.toMatchObject({
      code: 'cli.usage',
      message: expect.stringContaining('--webhook-public-key-file'),
    });
    await expect(
      command.run(['--webhook-url', 'ftp://x/', '--webhook-public-key-file', 'k.pem'], io().io),
    ).rejects.toMatchObject({ code: 'cli.usage' });
  });
});
