/**
 * A part that another needs but that is built after it (a cycle: the central system reports to
 * the metrics that read it, and hands transfer reports to the transfers that command it): set
 * once when it is built, read only after (the listeners start last, so nothing reads it before).
 */
export class LateBound<T> {
  private value: T | undefined;

  constructor(private readonly what: string) {}

  set(value: T): void {
    this.value = value;
  }

  get(): T {
    if (this.value === undefined) throw new Error(`${this.what} is read before it is built`);
    return this.value;
  }
}
