import type { LocalListEntry, LocalListOutcome, LocalListUpdate } from '../port.js';

/** A list entry's status in both protocols' words. */
export const ENTRY_STATUS: Record<LocalListEntry['status'], string> = {
  accepted: 'Accepted',
  blocked: 'Blocked',
};

/**
 * An update's entries in one protocol's words, removals first (an entry without its status
 * info removes the token in a differential update), then the tokens put; and its update type.
 */
export function updateFrame<T>(
  update: LocalListUpdate,
  removed: (token: { value: string; type: string }) => T,
  put: (entry: LocalListEntry) => T,
): { updateType: 'Full' | 'Differential'; list: T[] } {
  return {
    updateType: update.kind === 'full' ? 'Full' : 'Differential',
    list: [...update.remove.map(removed), ...update.put.map(put)],
  };
}

/**
 * The charger's SendLocalList answer: Accepted, VersionMismatch; NotSupported (1.6) or a
 * CALLERROR: it has no list after all; anything else (Failed) failed.
 */
export function listOutcome(status: string): LocalListOutcome {
  if (status === 'Accepted') return 'accepted';
  if (status === 'VersionMismatch') return 'version_mismatch';
  if (status === 'NotSupported' || status === 'CallError') return 'not_supported';
  return 'failed';
}
