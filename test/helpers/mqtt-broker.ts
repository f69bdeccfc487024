import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Aedes } from 'aedes';

/**
 * A real MQTT broker on a free 127.0.0.1 port. Debian's `mosquitto` when it is installed (as CI
 * installs it), with persistence in a temp folder so a restart keeps sessions and queued messages;
 * otherwise (or with FLEETGW_TEST_BROKER=aedes) an in-process aedes broker, whose "restart" closes
 * the listener and every connection and listens again (sessions live in its memory).
 */
export interface TestBroker {
  kind: 'mosquitto' | 'aedes';
  url: string;
  port: number;
  /** Stops the broker for real: connections drop, nothing answers on the port. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same persisted state. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export function mosquittoPath(): string | null {
  if (process.env.FLEETGW_TEST_BROKER === 'aedes') return null;
  for (const candidate of ['/usr/sbin/mosquitto', '/usr/local/sbin/mosquitto']) {
    if (spawnSync(candidate, ['-h']).error === undefined) return candidate;
  }
  const which = spawnSync('sh', ['-c', 'command -v mosquitto'], { encoding: 'utf8' });
  return which.status === 0 && which.stdout.trim() ? which.stdout.trim() : null;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

async function waitForPort(port: number, up: boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (open === up) return;
    if (Date.now() > deadline) throw new Error(`port ${port} not ${up ? 'open' : 'closed'}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function startBroker(): Promise<TestBroker> {
  const port = await freePort();
  const binary = mosquittoPath();
  return binary ? startMosquitto(binary, port, plainConfig) : startAedes(port);
}

/**
 * Mosquitto only (a bridge has no aedes stand-in): fails, never skips, where it is missing.
 * `config` writes the whole config file for the port and the broker's own temp folder.
 */
export async function startMosquittoWith(
  config: (port: number, dir: string) => string,
): Promise<TestBroker> {
  const binary = mosquittoPath();
  if (!binary) throw new Error('this test needs mosquitto (apt-get install mosquitto)');
  return startMosquitto(binary, await freePort(), config);
}

/** A standalone broker that keeps sessions and queued messages across a restart. */
export function plainConfig(port: number, dir: string): string {
  return [
    `listener ${port} 127.0.0.1`,
    'allow_anonymous true',
    // root does not drop to the mosquitto user, which could not write the temp folder
    'user root',
    'persistence true',
    `persistence_location ${dir}/`,
    // never drop QoS 1 messages queued for an offline persistent session (default 1000)
    'max_queued_messages 0',
    'log_dest none',
    '',
  ].join('\n');
}

async function startMosquitto(
  binary: string,
  port: number,
  config: (port: number, dir: string) => string,
): Promise<TestBroker> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-mosquitto-'));
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, config(port, dir));
  let child: ChildProcess | null = null;
  const broker: TestBroker = {
    kind: 'mosquitto',
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn(binary, ['-c', conf], { stdio: 'ignore' });
      await waitForPort(port, true);
    },
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM'); // mosquitto writes its persistence file on the way out
      await exited;
      child = null;
      await waitForPort(port, false);
    },
    async close() {
      await broker.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await broker.start();
  return broker;
}

async function startAedes(port: number): Promise<TestBroker> {
  const aedes = await Aedes.createBroker();
  let server: Server | null = null;
  const sockets = new Set<Socket>();
  const broker: TestBroker = {
    kind: 'aedes',
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async start() {
      const s = createServer((socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        aedes.handle(socket);
      });
      await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
      server = s;
    },
    async stop() {
      const s = server;
      if (!s) return;
      server = null;
      const closed = new Promise((r) => s.close(r));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async close() {
      await broker.stop();
      await new Promise<void>((r) => aedes.close(() => r()));
    },
  };
  await broker.start();
  return broker;
}
