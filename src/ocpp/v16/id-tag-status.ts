import { tokenStatusOf, type TokenVerdict } from '../port.js';

export type IdTagStatus16 = 'Accepted' | 'Blocked' | 'Expired' | 'Invalid' | 'ConcurrentTx';

/** 1.6 AuthorizationStatus has no NoCredit and no Unknown: both are Invalid. */
export function idTagStatus(verdict: TokenVerdict): IdTagStatus16 {
  switch (tokenStatusOf(verdict)) {
    case 'accepted':
      return 'Accepted';
    case 'blocked':
      return 'Blocked';
    case 'expired':
      return 'Expired';
    case 'concurrent':
      return 'ConcurrentTx';
    default:
      return 'Invalid';
  }
}
