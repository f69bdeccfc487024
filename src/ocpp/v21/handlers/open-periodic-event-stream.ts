import { recorded } from '../../charger-state/station-notifications.js';

/**
 * A station asking to stream a variable's values: Rejected, so it reports them with NotifyEvent.
 * The stream's data would come as NotifyPeriodicEventStream SEND frames, which ocpp-rpc 2.2.1
 * cannot receive (connection/refused-frames.ts).
 */
export const openPeriodicEventStream = recorded(
  'OpenPeriodicEventStream',
  { status: 'Rejected' },
  'SEND frames not received: Rejected',
);
