import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * A bench helper process (load generator, bare server, charger fleet, raw SQLite loop) forked from
 * its compiled sibling, spoken to over IPC: one request message in, reply messages out. Every child
 * is killed by `stop()`, which the section calls in `finally`.
 */
export interface Child<Out> {
  proc: ChildProcess;
  /** The next message the child sends (its answer to the last request). */
  next(timeoutMs?: number): Promise<Out>;
  send(message: unknown): void;
  stop(): Promise<void>;
}

export function forkChild<Out>(script: string, execArgv: string[] = []): Child<Out> {
  const proc = fork(fileURLToPath(new URL(`./${script}`, import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv,
  });
  const queue: Out[] = [];
  const waiters: { resolve(m: Out): void; reject(e: Error): void }[] = [];
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  proc.on('message', (m) => {
    const waiter = waiters.shift();
    if (waiter) waiter.resolve(m as Out);
    else queue.push(m as Out);
  });
  proc.once('exit', (code, signal) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`${script} exited (${code ?? signal})`));
  });
  return {
    proc,
    next(timeoutMs = 120_000) {
      const queued = queue.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      if (proc.exitCode !== null || proc.signalCode !== null) {
        return Promise.reject(new Error(`${script} has exited`));
      }
      return new Promise<Out>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${script} sent nothing in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
      });
    },
    send(message) {
      proc.send(message as object);
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** In a child: answers each request from the parent with `handle`, one at a time. */
export function serveParent<In, Out>(handle: (message: In) => Promise<Out>): void {
  let chain = Promise.resolve();
  process.on('message', (m) => {
    chain = chain.then(async () => {
      try {
        process.send?.(await handle(m as In));
      } catch (err) {
        process.send?.({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    });
  });
  // The parent gone (killed, crashed): so is this child.
  process.on('disconnect', () => process.exit(0));
}

/** Throws the child's error if its answer is one. */
export function unwrap<T>(answer: T | { error: string }): T {
  if (typeof answer === 'object' && answer !== null && 'error' in answer) {
    throw new Error(`bench child failed: ${(answer as { error: string }).error}`);
  }
  return answer as T;
}
