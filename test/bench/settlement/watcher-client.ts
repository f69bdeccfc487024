import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FromWatcher, ToWatcher } from './messages.js';

/** The credit watcher child (credit-watcher.ts, compiled sibling), over typed IPC. */
export class Watcher {
  private polls = 0;
  private spanNs = 0n;
  private gaps: number[] = [];
  private constructor(private readonly child: ChildProcess) {}

  static async start(dbPath: string): Promise<Watcher> {
    const child = fork(fileURLToPath(new URL('./credit-watcher.js', import.meta.url)), {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const w = new Watcher(child);
    await w.request({ type: 'open', dbPath }, 'ready');
    return w;
  }

  private request<T extends FromWatcher['type']>(
    message: ToWatcher,
    reply: T,
  ): Promise<Extract<FromWatcher, { type: T }>> {
    return new Promise((resolve, reject) => {
      const onMessage = (m: FromWatcher) => {
        if (m.type !== reply) return;
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        resolve(m as Extract<FromWatcher, { type: T }>);
      };
      const onExit = (code: number | null) =>
        reject(new Error(`credit watcher exited with ${code}`));
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send(message);
    });
  }

  /** Resolves once the watcher is polling, with what it will have seen (by session id). */
  watch(sessionIds: string[]): Promise<{ seen: Promise<Map<string, bigint>> }> {
    return new Promise((polling, reject) => {
      let seen: (m: Extract<FromWatcher, { type: 'seen' }>) => void = () => undefined;
      const done = new Promise<Extract<FromWatcher, { type: 'seen' }>>((r) => (seen = r));
      const onExit = (code: number | null) =>
        reject(new Error(`credit watcher exited with ${code}`));
      const onMessage = (m: FromWatcher) => {
        if (m.type === 'watching') {
          polling({
            seen: done.then((s) => {
              this.polls += s.polls;
              this.spanNs += BigInt(s.spanNs);
              this.gaps.push(Number(s.maxGapNs) / 1e6);
              return new Map(Object.entries(s.at).map(([k, v]) => [k, BigInt(v)]));
            }),
          });
        } else if (m.type === 'seen') {
          this.child.off('message', onMessage);
          this.child.off('exit', onExit);
          seen(m);
        }
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send({ type: 'watch', sessionIds, timeoutMs: 30_000 } satisfies ToWatcher);
    });
  }

  /** The longest poll gap of each watch: how late "committed" can be when descheduled. */
  gapsMs(): number[] {
    return this.gaps;
  }

  resolutionUs(): number {
    return this.polls === 0 ? Number.NaN : Number(this.spanNs) / 1e3 / this.polls;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await exited;
  }
}
