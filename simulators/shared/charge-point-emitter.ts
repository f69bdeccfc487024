import { EventEmitter } from 'node:events';
import type { ChargePointEventName, ChargePointEventPayload, ProtocolFlavour } from './events.js';

type Listener<K extends ChargePointEventName, P extends ProtocolFlavour> = (
  payload: ChargePointEventPayload<K, P>,
) => void;

/**
 * The event side of a simulated charger: typed on/once/off/emit and waitFor.
 *
 * They are typed here rather than through EventEmitter<Events>: its conditional listener types
 * cannot be related across protocol flavours, so a ChargePoint16 would not be assignable to the
 * version-neutral SimulatedChargePoint.
 */
export abstract class ChargePointEmitter<P extends ProtocolFlavour> extends EventEmitter {
  abstract readonly identity: string;

  override on<K extends ChargePointEventName>(event: K, listener: Listener<K, P>): this {
    return super.on(event, listener);
  }

  override once<K extends ChargePointEventName>(event: K, listener: Listener<K, P>): this {
    return super.once(event, listener);
  }

  override off<K extends ChargePointEventName>(event: K, listener: Listener<K, P>): this {
    return super.off(event, listener);
  }

  override emit<K extends ChargePointEventName>(
    event: K,
    payload: ChargePointEventPayload<K, P>,
  ): boolean {
    return super.emit(event, payload);
  }

  /** Resolves with the first matching event; rejects after timeoutMs (wall clock). */
  waitFor<K extends ChargePointEventName>(
    event: K,
    predicate: (payload: ChargePointEventPayload<K, P>) => boolean = () => true,
    timeoutMs = 10_000,
  ): Promise<ChargePointEventPayload<K, P>> {
    return new Promise((resolve, reject) => {
      const listener = (payload: ChargePointEventPayload<K, P>): void => {
        if (!predicate(payload)) return;
        cleanup();
        resolve(payload);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`${this.identity}: no '${event}' event within ${timeoutMs} ms`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.off(event, listener);
      };
      this.on(event, listener);
    });
  }
}
