import type { Socket } from 'node:net';
import type ocppRpc from 'ocpp-rpc';
import type { SiteDirectory } from '../../config/site.js';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/log.js';
import { admit } from './admission.js';
import { AuthThrottle } from './auth-throttle.js';

type AuthCallback = Parameters<InstanceType<typeof ocppRpc.RPCServer>['auth']>[0];
type Accept = Parameters<AuthCallback>[0];
type Reject = Parameters<AuthCallback>[1];
type Handshake = Parameters<AuthCallback>[2];

export interface AdmissionGateOptions {
  site: SiteDirectory;
  clock: Clock;
  log: Logger;
  /** The endpoint chargers connect under; a handshake for another path is an unknown charger. */
  path: string;
  /** Delay before refusing a failed admission, doubling per failure from the same address. */
  authFailureDelay: { initialMs: number; maxMs: number };
  /** The first protocol, in the charger's order of preference, that we speak (adapters.ts). */
  pickProtocol: (offered: Iterable<string>) => string | undefined;
  /** A charger holding several passwords was admitted with the one stored as `credential`. */
  onCredentialUsed?: (chargerId: string, credential: string) => void;
}

/**
 * The OCPP server's handshake check: admits a charger by its security profile (admission.ts),
 * holds each refusal back by the address's failures (auth-throttle.ts), and picks the subprotocol.
 */
export class AdmissionGate {
  private readonly throttle: AuthThrottle;
  private readonly pendingDelays = new Set<NodeJS.Timeout>();

  constructor(private readonly opts: AdmissionGateOptions) {
    this.throttle = new AuthThrottle({
      initialMs: opts.authFailureDelay.initialMs,
      maxMs: opts.authFailureDelay.maxMs,
      clock: opts.clock,
    });
  }

  async decide(accept: Accept, reject: Reject, handshake: Handshake): Promise<void> {
    const chargerId = handshake.identity;
    const remote = handshake.remoteAddress ?? 'unknown';
    const charger =
      handshake.endpoint === this.opts.path ? this.opts.site.charger(chargerId) : undefined;
    const verdict = await admit(
      charger,
      handshake.password,
      handshake.request.socket as Socket,
      this.opts.clock.now(),
    );
    if (!verdict.admitted) {
      const delayMs = this.throttle.failed(remote);
      this.opts.log.warn(
        {
          chargerId,
          remote,
          delayMs,
          ...(verdict.passwordInClear ? { passwordSentInClear: true } : {}),
        },
        `ocpp connection refused: ${verdict.reason}`,
      );
      await this.delay(delayMs);
      reject(verdict.status, verdict.status === 404 ? 'Not found' : 'Unauthorized');
      return;
    }
    this.throttle.succeeded(remote);
    const protocol = this.opts.pickProtocol(handshake.protocols);
    if (handshake.protocols.size > 0 && !protocol) {
      this.opts.log.warn(
        { chargerId, remote, offered: [...handshake.protocols] },
        'ocpp connection refused: no supported subprotocol',
      );
      reject(400, 'No supported OCPP subprotocol');
      return;
    }
    if (verdict.credential !== undefined) {
      try {
        this.opts.onCredentialUsed?.(chargerId, verdict.credential);
      } catch (err) {
        // The charger proved its password: a failed bookkeeping write must not refuse it.
        this.opts.log.error(
          { chargerId, err: (err as Error).message },
          'recording the password a charger used failed',
        );
      }
    }
    // A charger that offers no subprotocol gets none back and is held to ASSUMED_PROTOCOL.
    accept({ chargerId }, protocol ?? false);
  }

  /** Cuts every refusal's wait short, so no timer outlives the gateway. */
  close(): void {
    for (const timer of this.pendingDelays) clearTimeout(timer);
    this.pendingDelays.clear();
  }

  /** Waits before a refusal; close() cuts every wait short. */
  private delay(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pendingDelays.delete(timer);
        resolve();
      }, ms);
      this.pendingDelays.add(timer);
    });
  }
}
