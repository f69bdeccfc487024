import type { Routes201 } from '../v201/adapter.js';
import { ROUTES201 } from '../v201/routes.js';
import { batterySwap } from './handlers/battery-swap.js';
import { closePeriodicEventStream } from './handlers/close-periodic-event-stream.js';
import { notifyAllowedEnergyTransfer } from './handlers/notify-allowed-energy-transfer.js';
import { notifyDERAlarm } from './handlers/notify-der-alarm.js';
import { notifyDERStartStop } from './handlers/notify-der-start-stop.js';
import { notifyEvent } from './handlers/notify-event.js';
import { notifyPriorityCharging } from './handlers/notify-priority-charging.js';
import { notifySettlement } from './handlers/notify-settlement.js';
import { notifyWebPaymentStarted } from './handlers/notify-web-payment-started.js';
import { openPeriodicEventStream } from './handlers/open-periodic-event-stream.js';
import { pullDynamicScheduleUpdate } from './handlers/pull-dynamic-schedule-update.js';
import { reportDERControl } from './handlers/report-der-control.js';
import { vatNumberValidation } from './handlers/vat-number-validation.js';
import type { Handler201 } from '../v201/connection-context.js';

/** The calls 2.1 added that a station may send, and 2.1's own handler where it changed one. */
const ADDED21: Record<string, Handler201<never>> = {
  BatterySwap: batterySwap,
  ClosePeriodicEventStream: closePeriodicEventStream,
  NotifyAllowedEnergyTransfer: notifyAllowedEnergyTransfer,
  NotifyDERAlarm: notifyDERAlarm,
  NotifyDERStartStop: notifyDERStartStop,
  NotifyEvent: notifyEvent,
  NotifyPriorityCharging: notifyPriorityCharging,
  NotifySettlement: notifySettlement,
  NotifyWebPaymentStarted: notifyWebPaymentStarted,
  OpenPeriodicEventStream: openPeriodicEventStream,
  PullDynamicScheduleUpdate: pullDynamicScheduleUpdate,
  ReportDERControl: reportDERControl,
  VatNumberValidation: vatNumberValidation,
};

/**
 * Every call a 2.1 station may send that the gateway answers: 2.0.1's (2.1 keeps their messages,
 * adding optional fields), and the calls 2.1 added. Each request has been through 2.1's schema at
 * the edge before its handler reads it.
 */
export const ROUTES21: Routes201 = {
  ...(ROUTES201 as Routes201),
  ...(ADDED21 as Routes201),
};
