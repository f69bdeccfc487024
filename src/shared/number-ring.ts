/**
 * The last `capacity` records of `width` numbers each, in one array of doubles that grows as the
 * ring fills (4 records, then twice as many each time, at most `capacity`: a charger that has
 * sent three calls holds room for four, not fifty) and, once full, is written over in place,
 * oldest first. A record is 8 bytes a field with no object, box or pointer. A field with no value
 * is NaN. A plain array, not a Float64Array: V8 holds its doubles unboxed in its own heap, without
 * a typed array's ArrayBuffer objects and malloc'd store (about 200 bytes a ring, and memory the
 * garbage collector cannot compact); each growth makes a new array of the exact size, never
 * V8's slack of a pushed one.
 */
export class NumberRing {
  /** Every record's fields in turn; its length is the records allocated so far times `width`. */
  cells: number[] = [];
  private count = 0;
  private next = 0;

  constructor(
    readonly capacity: number,
    readonly width: number,
  ) {}

  /** Takes the next record's place (the oldest record's, once full): the record's index. */
  claim(): number {
    if (this.count < this.capacity && this.count * this.width >= this.cells.length) this.grow();
    const record = this.next;
    this.next = (this.next + 1) % this.capacity;
    if (this.count < this.capacity) this.count += 1;
    return record;
  }

  /** The records held, oldest first, as indices: record r's fields are cells[r*width ...]. */
  oldestFirst(): number[] {
    const start = this.count < this.capacity ? 0 : this.next;
    return Array.from({ length: this.count }, (_, i) => (start + i) % this.capacity);
  }

  /** Field `field` of record `record`, NaN read as null. */
  read(record: number, field: number): number | null {
    const value = this.cells[record * this.width + field] as number;
    return Number.isNaN(value) ? null : value;
  }

  /** Writes field `field` of record `record`; null is held as NaN. */
  write(record: number, field: number, value: number | null): void {
    this.cells[record * this.width + field] = value ?? Number.NaN;
  }

  private grow(): void {
    const records = Math.min(this.capacity, Math.max(4, (this.cells.length / this.width) * 2));
    const cells = new Array<number>(records * this.width).fill(Number.NaN);
    for (let i = 0; i < this.cells.length; i++) cells[i] = this.cells[i] as number;
    this.cells = cells;
  }
}
