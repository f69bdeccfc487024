import { tokenStatusOf, type TokenVerdict } from '../port.js';

export type AuthorizationStatus201 =
  'Accepted' | 'Blocked' | 'ConcurrentTx' | 'Expired' | 'Invalid' | 'NoCredit' | 'Unknown';

export function authorizationStatus(verdict: TokenVerdict): AuthorizationStatus201 {
  switch (tokenStatusOf(verdict)) {
    case 'accepted':
      return 'Accepted';
    case 'blocked':
      return 'Blocked';
    case 'expired':
      return 'Expired';
    case 'concurrent':
      return 'ConcurrentTx';
    case 'no_credit':
      return 'NoCredit';
    case 'unknown':
      return 'Unknown';
    default:
      return 'Invalid';
  }
}
