import type { Logger } from '../shared/log.js';
import { clearUnrefTimer } from '../shared/unref-timer.js';
import type { Transfers } from './transfers.js';

export interface UpkeepOptions {
  log: Logger;
  /** retention.logFilesDays / firmwareFilesDays: 0 keeps those files. */
  logFilesDays: number;
  firmwareFilesDays: number;
  /** retention.intervalMinutes, as the other retention windows. */
  retentionIntervalMs: number;
}

/** Jobs are checked for silence this often: a timeout is minutes long, so a minute late at most. */
const TIMEOUT_CHECK_MS = 60_000;

/**
 * The transfers' own upkeep: silent jobs end `TimedOut` (at start-up, then each minute, so a
 * restart never leaves one open for ever) and files past their retention window are deleted
 * (with the other retention windows' interval).
 */
export class TransferUpkeep {
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly transfers: Transfers,
    private readonly o: UpkeepOptions,
  ) {}

  start(): void {
    this.every(TIMEOUT_CHECK_MS, () => this.transfers.timeOutSilentJobs());
    this.every(this.o.retentionIntervalMs, () => {
      const pruned = {
        log: this.transfers.keeping.pruneFiles('log', this.o.logFilesDays),
        firmware: this.transfers.keeping.pruneFiles('firmware', this.o.firmwareFilesDays),
      };
      if (pruned.log + pruned.firmware > 0) {
        this.o.log.info({ pruned }, 'retention: transfer files past their window deleted');
      }
    });
  }

  stop(): void {
    for (const timer of this.timers) clearUnrefTimer(timer);
    this.timers = [];
  }

  /** Runs `work` now and then every `ms`; a failure is logged and the next run still comes. */
  private every(ms: number, work: () => void): void {
    const run = () => {
      try {
        work();
      } catch (err) {
        this.o.log.error({ err: (err as Error).message }, 'transfer upkeep failed');
      }
    };
    run();
    this.timers.push(setInterval(run, ms).unref());
  }
}
