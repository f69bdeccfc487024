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

  /**
   * Runs `task` every `simSeconds` on a fixed grid. setInterval re-arms from whenever a late
   * callback ran, so on a busy machine every delay would add up and simulated time would fall
   * behind the energy accrual (which reads the clock); a late tick here only moves itself, and
   * ticks a stalled event loop missed entirely are skipped as a meter would.
   */
  every(name: string, simSeconds: number, task: Task): void {
    this.clear(name);
    const periodMs = Math.max(1, this.wallMs(simSeconds));
    let dueMs = performance.now() + periodMs;
    const tick = (): void => {
      const lateBy = performance.now() - dueMs;
      dueMs += periodMs * (lateBy > 0 ? Math.floor(lateBy / periodMs) + 1 : 1);
      this.timers.set(name, setTimeout(tick, Math.max(0, dueMs - performance.now())));
      this.run(task);
    };
    this.timers.set(name, setTimeout(tick, periodMs));
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
