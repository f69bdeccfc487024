import type { Clock } from './clock.js';

/**
 * A token bucket: `capacity` requests at once, refilled continuously at `perSecond`. Used for the
 * API's per-credential limits and the per-connection OCPP message rate.
 */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly capacity: number,
    private readonly perSecond: number,
    private readonly clock: Clock,
  ) {
    this.tokens = capacity;
    this.at = clock.now();
  }

  /** Takes one token: 0 when there was one, else the milliseconds until there will be. */
  take(): number {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - this.tokens) / this.perSecond) * 1000));
  }

  /** Whether the bucket has refilled completely (its state can then be forgotten). */
  isFull(): boolean {
    this.refill();
    return this.tokens >= this.capacity;
  }

  private refill(): void {
    const now = this.clock.now();
    // A clock stepping backwards must not drain or overfill the bucket.
    const elapsed = Math.max(0, now - this.at);
    this.tokens = Math.min(this.capacity, this.tokens + (elapsed / 1000) * this.perSecond);
    this.at = now;
  }
}

/** One bucket per key (an API key's hash, a driver token's hash), with bounded memory. */
export class KeyedRateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly capacity: number,
    private readonly perSecond: number,
    private readonly clock: Clock,
    private readonly maxKeys = 100_000,
  ) {}

  /** 0 when the request may go ahead, else the milliseconds to wait. */
  take(key: string): number {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.prune();
      bucket = new TokenBucket(this.capacity, this.perSecond, this.clock);
      this.buckets.set(key, bucket);
    }
    return bucket.take();
  }

  private prune(): void {
    for (const [key, bucket] of this.buckets) if (bucket.isFull()) this.buckets.delete(key);
    // Still full of busy keys: forget the oldest, which at worst gives one caller a fresh burst.
    for (const key of this.buckets.keys()) {
      if (this.buckets.size < this.maxKeys) break;
      this.buckets.delete(key);
    }
  }
}
