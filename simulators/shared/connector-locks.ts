/**
 * What a connector's cable lock does when the central system asks to unlock it: `lock` opens,
 * `jammed` stays shut (UnlockFailed), `fixed-cable` has no lock to open (1.6 NotSupported; a
 * 2.0.1 station has no such answer and reports UnlockFailed).
 */
export type LockBehaviour = 'lock' | 'jammed' | 'fixed-cable';

/** The cable locks of a charger's connectors (1.6) or EVSEs (2.0.1), numbered from 1. */
export class ConnectorLocks {
  private readonly behaviours = new Map<number, LockBehaviour>();

  set(connectorId: number, behaviour: LockBehaviour): void {
    this.behaviours.set(connectorId, behaviour);
  }

  of(connectorId: number): LockBehaviour {
    return this.behaviours.get(connectorId) ?? 'lock';
  }
}
