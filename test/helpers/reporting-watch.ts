import { LimitWatch, type LimitWatchOptions } from '../../src/charging/limit-watch.js';

/**
 * The watch as the lifecycle drives it: a reading that reaches the paid energy is returned by
 * `begin`/`sample` (the caller stops at once), a planned stop comes from its timer (`onLimit`).
 * Here both reach `onLimit`, so a test sees every stop the watch asks for, however it comes.
 */
export class ReportingWatch extends LimitWatch {
  constructor(private readonly options: LimitWatchOptions) {
    super(options);
  }

  override begin(...args: Parameters<LimitWatch['begin']>): boolean {
    return this.reported(args[0], super.begin(...args));
  }

  override sample(...args: Parameters<LimitWatch['sample']>): boolean {
    return this.reported(args[0], super.sample(...args));
  }

  private reported(sessionId: string, reached: boolean): boolean {
    if (reached) this.options.onLimit(sessionId);
    return reached;
  }
}
