import type { Clock } from '../../shared/clock.js';

export interface AuthThrottleOptions {
  initialMs: number;
  maxMs: number;
  clock: Clock;
  /** An address with no failure for this long starts over. */
  forgetAfterMs?: number;
  /** Addresses remembered at most (a flood from many addresses cannot exhaust memory). */
  maxAddresses?: number;
}

interface Failures {
  count: number;
  lastAt: number;
  /** When the wait after the last failure is over. */
  untilMs: number;
}

/**
 * Slows down password guessing: each failed admission from an address waits before its refusal,
 * twice as long as the one before (initialMs, 2×, 4×, … up to maxMs). A success from the address
 * clears its record. The wait is per attempt, so parallel guesses escalate just as fast.
 */
export class AuthThrottle {
  private readonly failures = new Map<string, Failures>();
  private readonly forgetAfterMs: number;
  private readonly maxAddresses: number;

  constructor(private readonly opts: AuthThrottleOptions) {
    this.forgetAfterMs = opts.forgetAfterMs ?? 15 * 60_000;
    this.maxAddresses = opts.maxAddresses ?? 10_000;
  }

  /** Records a failure and returns how long to wait before answering it. */
  failed(address: string): number {
    const now = this.opts.clock.now();
    let record = this.failures.get(address);
    if (!record || now - record.lastAt > this.forgetAfterMs) {
      if (!record && this.failures.size >= this.maxAddresses) this.evict(now);
      record = { count: 0, lastAt: now, untilMs: now };
    }
    record.count += 1;
    record.lastAt = now;
    // Re-inserting keeps the map in order of last failure, so eviction drops the stalest first.
    this.failures.delete(address);
    this.failures.set(address, record);
    if (this.opts.initialMs === 0) return 0;
    const exponent = Math.min(record.count - 1, 30);
    const waitMs = Math.min(this.opts.maxMs, this.opts.initialMs * 2 ** exponent);
    record.untilMs = now + waitMs;
    return waitMs;
  }

  /**
   * How long the address must still wait after its last failure (0 when it may try): for a
   * caller that refuses early attempts (429) instead of holding each answer back.
   */
  waitLeft(address: string): number {
    const record = this.failures.get(address);
    return record ? Math.max(0, record.untilMs - this.opts.clock.now()) : 0;
  }

  succeeded(address: string): void {
    this.failures.delete(address);
  }

  private evict(now: number): void {
    for (const [address, record] of this.failures) {
      if (this.failures.size < this.maxAddresses) return;
      if (now - record.lastAt > this.forgetAfterMs || this.failures.size >= this.maxAddresses) {
        this.failures.delete(address);
      }
    }
  }
}
