// Node caps timer delays at 2^31-1 ms; longer delays would fire immediately.
const MAX_DELAY_MS = 2_147_483_647;

type Task = () => void | Promise<void>;

/**
 * Named timers measured in simulated seconds. Naming them lets a reconfiguration replace a
 * running timer, and keeping them all in one place lets disconnect() guarantee that nothing
 * keeps the process alive afterwards.
 */
export class SimTimers {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly sleepers = new Set<(completed: boolean) => void>();

  constructor(
    private readonly timeFactor: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  wallMs(simSeconds: number): number {
    return Math.min(MAX_DELAY_MS, Math.max(0, (simSeconds * 1000) / this.timeFactor));
  }

  after(name: string, simSeconds: number, task: Task): void {
    this.clear(name);
    const handle = setTimeout(() => {
      this.timers.delete(name);
      this.run(task);
    }, this.wallMs(simSeconds));
    this.timers.set(name, handle);
  }

  every(name: string, simSeconds: number, task: Task): void {
    this.clear(name);
    this.timers.set(
      name,
      setInterval(() => this.run(task), Math.max(1, this.wallMs(simSeconds))),
    );
  }

  has(name: string): boolean {
    return this.timers.has(name);
  }

  clear(name: string): void {
    const handle = this.timers.get(name);
    if (handle === undefined) return;
    // clearTimeout also clears intervals: Node uses one Timeout class for both.
    clearTimeout(handle);
    this.timers.delete(name);
  }

  /** Resolves true after the delay, or false as soon as clearAll() runs. */
  sleep(simSeconds: number): Promise<boolean> {
    return new Promise((resolve) => {
      const finish = (completed: boolean): void => {
        clearTimeout(handle);
        this.sleepers.delete(finish);
        resolve(completed);
      };
      const handle = setTimeout(() => finish(true), this.wallMs(simSeconds));
      this.sleepers.add(finish);
    });
  }

  clearAll(): void {
    for (const handle of this.timers.values()) clearTimeout(handle);
    this.timers.clear();
    for (const finish of [...this.sleepers]) finish(false);
  }

  private run(task: Task): void {
    try {
      const result = task();
      if (result instanceof Promise) result.catch(this.onError);
    } catch (error) {
      this.onError(error);
    }
  }
}
