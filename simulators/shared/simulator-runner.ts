import type { ChargePointOptions } from './charge-point-options.js';
import { toChargePointOptions, toVehicle } from './cli-options.js';
import type { PlugConfig, SimulatorConfig } from './cli-options.js';
import type { ChargePointEventName, ChargePointEventPayload } from './events.js';
import type { SimulatedChargePoint } from './simulated-charge-point.js';

export type EventLine = Record<string, unknown>;

/** Builds the protocol version's charger; the runner never needs to know which one it is. */
export type ChargePointFactory = (options: ChargePointOptions) => SimulatedChargePoint;

export interface RunnerOutput {
  event(line: EventLine): void;
  problem(line: EventLine): void;
}

// Meter values arrive every few hundred ms at high time factors; a log line each is noise.
const METER_LOG_INTERVAL_MS = 5_000;
const CONNECT_RETRY_MS = 5_000;

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs one simulated charge point for the CLI: connect with retries, plug, re-plug, log. */
export class SimulatorRunner {
  readonly chargePoint: SimulatedChargePoint;
  private readonly replugTimers = new Map<number, ReturnType<typeof setTimeout>>();
  private readonly replugging = new Set<number>();
  private readonly lastMeterLogMs = new Map<number, number>();
  private stopped = false;
  private cancelPause?: () => void;

  constructor(
    private readonly config: SimulatorConfig,
    private readonly output: RunnerOutput,
    create: ChargePointFactory,
    trace = false,
  ) {
    this.chargePoint = create(toChargePointOptions(config));
    this.logEvents();
    if (trace) this.chargePoint.on('frame', (frame) => this.problem('frame', { ...frame }));
    this.chargePoint.on('transactionStopped', ({ connectorId }) =>
      this.scheduleReplug(connectorId),
    );
    this.chargePoint.on('unplugged', ({ connectorId }) => {
      if (!this.replugging.has(connectorId)) this.scheduleReplug(connectorId);
    });
  }

  async start(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.chargePoint.connect();
        break;
      } catch (error) {
        this.problem('connectFailed', {
          error: describeError(error),
          retryInMs: CONNECT_RETRY_MS,
        });
        await this.pause(CONNECT_RETRY_MS);
      }
    }
    for (const plug of this.config.plug) {
      if (this.stopped) return;
      await this.plug(plug);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelPause?.();
    for (const timer of this.replugTimers.values()) clearTimeout(timer);
    this.replugTimers.clear();
    await this.chargePoint.disconnect();
  }

  private async plug(plug: PlugConfig): Promise<void> {
    try {
      await this.chargePoint.plugIn(plug.connector, toVehicle(plug));
      if (plug.card !== undefined) await this.chargePoint.tap(plug.connector, plug.card);
    } catch (error) {
      this.problem('plugFailed', { connectorId: plug.connector, error: describeError(error) });
    }
  }

  /** Brings the same vehicle back with its initial SoC so a demo can run again. */
  private scheduleReplug(connectorId: number): void {
    const plug = this.config.plug.find((candidate) => candidate.connector === connectorId);
    const delaySeconds = this.config.replugAfter;
    if (this.stopped || !plug || delaySeconds === undefined) return;
    clearTimeout(this.replugTimers.get(connectorId));
    const timer = setTimeout(() => {
      this.replugTimers.delete(connectorId);
      void this.replug(plug);
    }, delaySeconds * 1000);
    this.replugTimers.set(connectorId, timer);
  }

  private async replug(plug: PlugConfig): Promise<void> {
    if (this.stopped) return;
    const state = this.chargePoint.state(plug.connector);
    if (state.transactionId !== undefined) return;
    this.replugging.add(plug.connector);
    try {
      if (state.plugged) await this.chargePoint.unplug(plug.connector);
      await this.plug(plug);
    } catch (error) {
      this.problem('replugFailed', { connectorId: plug.connector, error: describeError(error) });
    } finally {
      this.replugging.delete(plug.connector);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.cancelPause = done;
    });
  }

  private logEvents(): void {
    const cp = this.chargePoint;
    const forward = <K extends ChargePointEventName>(event: K): void => {
      const listener = (payload: ChargePointEventPayload<K>): void =>
        this.line(event, { ...payload });
      cp.on(event, listener);
    };
    forward('connected');
    forward('disconnected');
    forward('reconnected');
    forward('status');
    forward('plugged');
    forward('unplugged');
    forward('remoteStart');
    forward('tapped');
    forward('remoteStop');
    forward('transactionStarted');
    forward('vehicleFull');
    forward('transactionStopped');
    forward('configurationChanged');
    forward('chargingProfile');
    forward('powerLimit');
    forward('reset');
    forward('screen');
    cp.on('meterValues', (meter) => {
      const now = Date.now();
      const last = this.lastMeterLogMs.get(meter.connectorId);
      if (last !== undefined && now - last < METER_LOG_INTERVAL_MS) return;
      this.lastMeterLogMs.set(meter.connectorId, now);
      this.line('meterValues', { ...meter });
    });
    cp.on('warning', ({ message, error }) => {
      this.problem(
        'warning',
        error === undefined ? { message } : { message, error: describeError(error) },
      );
    });
  }

  private line(event: string, fields: EventLine): void {
    this.output.event({ time: new Date().toISOString(), cp: this.config.id, event, ...fields });
  }

  private problem(event: string, fields: EventLine): void {
    this.output.problem({ time: new Date().toISOString(), cp: this.config.id, event, ...fields });
  }
}
