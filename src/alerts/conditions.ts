import { X509Certificate } from 'node:crypto';
import { readFileSync, statfsSync } from 'node:fs';
import type { AlertKind } from './alert.js';

/** A condition that holds now; the watch raises it once it has held long enough. */
export interface Observation {
  kind: AlertKind;
  subject: string;
  detail: Record<string, unknown>;
}

/** What the watch reads of the chargers: the site's list and the central system's live view. */
export interface ChargerLook {
  /** Configured chargers and their connector ids. */
  chargers(): { id: string; connectorIds: string[] }[];
  isOnline(chargerId: string): boolean;
  /** A connector's status and error code (the whole charger's when it blocks every connector). */
  connector(chargerId: string, connectorId: string): { status: string; errorCode: string | null };
}

/**
 * Offline chargers, and faulted connectors of chargers that are online (an offline charger's
 * last status is stale; its offline alert says more).
 */
export function chargerObservations(look: ChargerLook, faulted: boolean): Observation[] {
  const out: Observation[] = [];
  for (const charger of look.chargers()) {
    if (!look.isOnline(charger.id)) {
      out.push({ kind: 'charger_offline', subject: charger.id, detail: { chargerId: charger.id } });
      continue;
    }
    if (!faulted) continue;
    for (const connectorId of charger.connectorIds) {
      const view = look.connector(charger.id, connectorId);
      if (view.status !== 'faulted') continue;
      out.push({
        kind: 'charger_faulted',
        subject: `${charger.id}/${connectorId}`,
        detail: { chargerId: charger.id, connectorId, errorCode: view.errorCode },
      });
    }
  }
  return out;
}

export function outboxObservation(
  backlog: { depth: number; oldestUnsentAgeSeconds: number },
  limits: { depth: number; ageSeconds: number },
): Observation[] {
  const { depth, oldestUnsentAgeSeconds: ageSeconds } = backlog;
  if (depth < limits.depth && (depth === 0 || ageSeconds < limits.ageSeconds)) return [];
  return [
    {
      kind: 'outbox_backlog',
      subject: 'outbox',
      detail: {
        depth,
        oldestAgeSeconds: ageSeconds,
        depthLimit: limits.depth,
        ageLimitSeconds: limits.ageSeconds,
      },
    },
  ];
}

/** Free space of the file system holding `dir`, below `minPercent`. */
export function diskObservation(dir: string, minPercent: number): Observation[] {
  const fs = statfsSync(dir);
  const freeBytes = fs.bavail * fs.bsize;
  const totalBytes = fs.blocks * fs.bsize;
  const freePercent = totalBytes > 0 ? (100 * freeBytes) / totalBytes : 100;
  if (freePercent >= minPercent) return [];
  return [
    {
      kind: 'disk_space',
      subject: dir,
      detail: { freeBytes, totalBytes, freePercent: Math.floor(freePercent * 10) / 10, minPercent },
    },
  ];
}

/**
 * Listener certificates that expire within `days` (or have expired). A file that cannot be read
 * or parsed is an alert too: the listener will not come back up after a restart.
 */
export function certificateObservations(
  files: readonly { listener: string; cert: string }[],
  days: number,
  nowMs: number,
): Observation[] {
  const out: Observation[] = [];
  for (const { listener, cert } of files) {
    let notAfter: string;
    try {
      notAfter = new Date(new X509Certificate(readFileSync(cert)).validTo).toISOString();
    } catch (err) {
      out.push({
        kind: 'certificate_expiry',
        subject: listener,
        detail: { listener, file: cert, error: (err as Error).message },
      });
      continue;
    }
    const daysLeft = (Date.parse(notAfter) - nowMs) / 86_400_000;
    if (daysLeft >= days) continue;
    out.push({
      kind: 'certificate_expiry',
      subject: listener,
      detail: { listener, file: cert, notAfter, daysLeft: Math.floor(daysLeft * 10) / 10 },
    });
  }
  return out;
}
