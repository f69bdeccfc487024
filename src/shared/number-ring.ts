/**
 * The last `capacity` records of `width` numbers each, in one array of doubles allocated whole when
 * the ring is made: a full ring costs what an empty one does (so a memory figure taken early is the
 * worst case), a record is 8 bytes a field with no object, box or pointer, and the oldest record is
 * written over in place. A field with no value is NaN. A plain array, not a Float64Array: V8 holds
 * its doubles unboxed in its own heap, without a typed array's ArrayBuffer objects and malloc'd
 * store (about 200 bytes a ring, and memory the garbage collector cannot compact).
 */
export class NumberRing {
  readonly cells: number[];
  private count = 0;
  private next = 0;

  constructor(
    readonly capacity: number,
    readonly width: number,
  ) {
    this.cells = new Array<number>(capacity * width).fill(Number.NaN);
  }

  /** Takes the next record's place (the oldest record's, once full): the record's index. */
  claim(): number {
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
}
