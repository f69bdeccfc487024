/** IPC between the settlement bench and its credit watcher (a separate process). */
export type ToWatcher =
  | { type: 'open'; dbPath: string }
  | { type: 'watch'; sessionIds: string[]; timeoutMs: number }
  | { type: 'close' };

export type FromWatcher =
  | { type: 'ready' }
  | { type: 'watching' }
  | {
      type: 'seen';
      /** process.hrtime.bigint() (CLOCK_MONOTONIC, the same clock in every process) as a string. */
      at: Record<string, string>;
      polls: number;
      /** Nanoseconds the polling loop ran, so polls / span gives the resolution. */
      spanNs: string;
      /** The longest time between two polls: when the watcher was off its core. */
      maxGapNs: string;
    };
