import { recorded } from '../../charger-state/station-notifications.js';

/**
 * A station asking for the next values of a Dynamic charging profile: site power sends Relative
 * profiles only, so no profile of the gateway's is dynamic and the answer is Rejected.
 */
export const pullDynamicScheduleUpdate = recorded(
  'PullDynamicScheduleUpdate',
  { status: 'Rejected' },
  'no dynamic profile: Rejected',
);
