import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { rssBytes } from '../lib/stats.js';
import type { BareReady, Faults, GeneratorCommand, GeneratorReply } from './protocol.js';

/** A command without its sequence number (added here); distributes over the union. */
type WithoutSeq<T> = T extends unknown ? Omit<T, 'seq'> : never;
type Command = WithoutSeq<GeneratorCommand>;

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => child.once('exit', () => r()));
}

/** A load generator child process, driven one command at a time over IPC. */
export class GeneratorChild {
  private readonly child: ChildProcess;
  private seq = 0;
  private readonly waiting = new Map<number, (reply: GeneratorReply) => void>();

  constructor() {
    this.child = fork(fileURLToPath(new URL('./generator.js', import.meta.url)), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (reply: GeneratorReply) => {
      this.waiting.get(reply.seq)?.(reply);
      this.waiting.delete(reply.seq);
    });
  }

  /** Sends a command; throws on its failure and on any fault the generator has seen so far. */
  async request(command: Command): Promise<GeneratorReply & { ok: true }> {
    const seq = ++this.seq;
    const reply = await new Promise<GeneratorReply>((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`load generator exited with ${code} during ${command.cmd}`));
      this.child.once('exit', onExit);
      this.waiting.set(seq, (r) => {
        this.child.off('exit', onExit);
        resolve(r);
      });
      this.child.send({ ...command, seq });
    });
    if (!reply.ok) throw new Error(`load generator ${command.cmd}: ${reply.error}`);
    assertNoFaults(reply.faults);
    return reply;
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await exited(this.child);
  }
}

function assertNoFaults(f: Faults): void {
  if (f.callErrors + f.refused + f.unknownCalls + f.closed === 0) return;
  throw new Error(
    `the server did not answer as a working server does (${f.callErrors} CALLERRORs, ` +
      `${f.refused} refusals, ${f.unknownCalls} unknown calls, ${f.closed} closed): ` +
      f.examples.join('; '),
  );
}

/** A bare ocpp-rpc reference server, in its own process (bare-server.ts). */
export class BareServerChild {
  private constructor(
    private readonly child: ChildProcess,
    readonly ocppUrl: string,
    readonly pid: number,
  ) {}

  /**
   * `env`: added to the child's environment (e.g. the memory probe's NODE_OPTIONS); `dbPath`: the
   * server writes each meter sample to this database before answering it.
   */
  static async start(env: Record<string, string> = {}, dbPath?: string): Promise<BareServerChild> {
    const args = dbPath === undefined ? [] : [dbPath];
    const child = fork(fileURLToPath(new URL('./bare-server.js', import.meta.url)), args, {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, ...env },
    });
    const ready = await new Promise<BareReady>((resolve, reject) => {
      child.once('message', (m: BareReady) => resolve(m));
      child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
    });
    if (child.pid === undefined) throw new Error('bare server has no pid');
    return new BareServerChild(child, `ws://127.0.0.1:${ready.port}/ocpp`, child.pid);
  }

  rss(): Promise<number> {
    return rssBytes(this.pid);
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await exited(this.child);
  }
}
