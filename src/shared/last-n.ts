/**
 * The last `capacity` items pushed, oldest written over first: a ring, so a full one takes a new
 * item in place (an array's shift() moves every item, on every push once full).
 */
export class LastN<T> {
  private readonly items: T[] = [];
  private next = 0;

  constructor(private readonly capacity: number) {}

  push(item: T): void {
    if (this.items.length < this.capacity) this.items.push(item);
    else this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
  }

  /** A copy, oldest first. */
  oldestFirst(): T[] {
    return this.items.length < this.capacity
      ? [...this.items]
      : [...this.items.slice(this.next), ...this.items.slice(0, this.next)];
  }
}
