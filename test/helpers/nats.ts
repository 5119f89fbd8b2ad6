import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { join } from 'node:path';
import { jetstreamManager, type StoredMsg } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { freePort } from './cli.js';
import { tempDir } from './records.js';

/*
 * NATS for the feed's tests. They need a NATS server with JetStream: the one TRANSPORT_TEST_NATS_URL
 * names, else the one this project's machines and CI run on 127.0.0.1:4222 (.ci/run starts one
 * when none answers), else one this test process starts from the nats-server binary (Debian's
 * package nats-server). Tests that stop and restart a server always start their own. None of
 * these: the test fails saying what it needs; nothing is skipped.
 */

const NEEDS_SERVER =
  'these tests need a NATS server with JetStream: run `nats-server -js` on 127.0.0.1:4222 ' +
  '(Debian: apt-get install nats-server), install nats-server for the tests to start their own, ' +
  'or set TRANSPORT_TEST_NATS_URL';

/** This process's own server, when no shared one answered. */
let ownServer: Promise<{ url: string; stop: () => Promise<void> }> | undefined;

/** The test server's URL: one that answers, or one started for this test process. */
export async function natsUrl(): Promise<string> {
  const given = process.env.TRANSPORT_TEST_NATS_URL?.trim();
  const url = given || 'nats://127.0.0.1:4222';
  if (await answers(url)) return url;
  if (given)
    throw new Error(`nothing answers at TRANSPORT_TEST_NATS_URL (${url}): ${NEEDS_SERVER}`);
  try {
    natsServerBinary();
  } catch {
    throw new Error(`nothing answers at ${url} and nats-server is not installed: ${NEEDS_SERVER}`);
  }
  ownServer ??= startOwnNatsServer().then((server) => {
    process.once('exit', () => void server.stop());
    return server;
  });
  return (await ownServer).url;
}

async function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise<boolean>((resolve) => {
    const socket = connectTcp({ host: hostname, port: Number(port || 4222) });
    const done = (isOpen: boolean) => {
      socket.destroy();
      resolve(isOpen);
    };
    socket.setTimeout(2_000);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.once('timeout', () => done(false));
  });
}

/** The nats-server binary, for tests that stop and start a server of their own. */
export function natsServerBinary(): string {
  const candidates = [
    process.env.TRANSPORT_TEST_NATS_SERVER,
    ...(process.env.PATH ?? '').split(':').map((dir) => join(dir, 'nats-server')),
    '/usr/sbin/nats-server',
    '/usr/local/bin/nats-server',
  ];
  const found = candidates.find((path) => path && existsSync(path));
  if (!found) {
    throw new Error(
      'this test starts and stops a NATS server of its own and needs the nats-server binary ' +
        '(Debian: apt-get install nats-server; or set TRANSPORT_TEST_NATS_SERVER to its path)',
    );
  }
  return found;
}

/**
 * A NATS server of the test's own with JetStream, on a free port; its store survives restarts.
 * `extraArgs` go to nats-server (TLS, for one).
 */
export async function startOwnNatsServer(extraArgs: string[] = []) {
  const binary = natsServerBinary();
  const port = await freePort();
  const storeDir = tempDir('transport-sync-nats-');
  let child: ChildProcess | null = null;

  async function start(): Promise<void> {
    const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, ...extraArgs];
    const started = spawn(binary, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = started;
    // It is ready once its log says the server is; it logs to stderr.
    await new Promise<void>((resolve, reject) => {
      let log = '';
      started.stderr?.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        if (log.includes('Server is ready')) resolve();
      });
      started.once('exit', (code) =>
        reject(new Error(`nats-server exited (${code}) before it was ready:\n${log}`)),
      );
    });
  }
  async function stop(): Promise<void> {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  }
  await start();
  return { url: `nats://127.0.0.1:${port}`, start, stop };
}

/** A connection for reading what the sink published; closed by the caller. */
export function natsClient(url: string): Promise<NatsConnection> {
  return connect({ servers: url, name: 'transport-sync-test' });
}

/** Every message the stream holds on `subject`, in stream order. */
export async function streamMessages(
  nc: NatsConnection,
  stream: string,
  subject: string,
): Promise<StoredMsg[]> {
  const manager = await jetstreamManager(nc);
  const info = await manager.streams.info(stream);
  const messages: StoredMsg[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && seq > 0; seq += 1) {
    const message = await manager.streams.getMessage(stream, { seq });
    if (message && message.subject === subject) messages.push(message);
  }
  return messages;
}

/** Removes the stream, if there is one (tests use subjects and streams of their own). */
export async function deleteStream(nc: NatsConnection, stream: string): Promise<void> {
  const manager = await jetstreamManager(nc);
  await manager.streams.delete(stream).catch(() => undefined);
}
