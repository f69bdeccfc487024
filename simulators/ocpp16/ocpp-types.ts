import type { ScheduleLike } from '../shared/charging-profile.js';
import type { FaultCode } from '../shared/events.js';
// OCPP 1.6J message shapes used by the simulator, transcribed from the JSON schemas that ocpp-rpc
// enforces in strict mode (node_modules/ocpp-rpc/lib/schemas/ocpp1_6.json).

export type ChargePointStatus =
  | 'Available'
  | 'Preparing'
  | 'Charging'
  | 'SuspendedEVSE'
  | 'SuspendedEV'
  | 'Finishing'
  | 'Reserved'
  | 'Unavailable'
  | 'Faulted';

/** 1.6's ChargePointErrorCode is the vocabulary the shared simulator API speaks. */
export type ChargePointErrorCode = FaultCode;

export type StopReason =
  | 'EmergencyStop'
  | 'EVDisconnected'
  | 'HardReset'
  | 'Local'
  | 'Other'
  | 'PowerLoss'
  | 'Reboot'
  | 'Remote'
  | 'SoftReset'
  | 'UnlockCommand'
  | 'DeAuthorized';

export type AuthorizationStatus = 'Accepted' | 'Blocked' | 'Expired' | 'Invalid' | 'ConcurrentTx';

export type ReadingContext =
  | 'Interruption.Begin'
  | 'Interruption.End'
  | 'Sample.Clock'
  | 'Sample.Periodic'
  | 'Transaction.Begin'
  | 'Transaction.End'
  | 'Trigger'
  | 'Other';

export const MEASURANDS = [
  'Energy.Active.Export.Register',
  'Energy.Active.Import.Register',
  'Energy.Reactive.Export.Register',
  'Energy.Reactive.Import.Register',
  'Energy.Active.Export.Interval',
  'Energy.Active.Import.Interval',
  'Energy.Reactive.Export.Interval',
  'Energy.Reactive.Import.Interval',
  'Power.Active.Export',
  'Power.Active.Import',
  'Power.Offered',
  'Power.Reactive.Export',
  'Power.Reactive.Import',
  'Power.Factor',
  'Current.Import',
  'Current.Export',
  'Current.Offered',
  'Voltage',
  'Frequency',
  'Temperature',
  'SoC',
  'RPM',
] as const;
export type Measurand = (typeof MEASURANDS)[number];

export type UnitOfMeasure = 'Wh' | 'kWh' | 'W' | 'kW' | 'A' | 'V' | 'Celsius' | 'Percent';
export type Location = 'Cable' | 'EV' | 'Inlet' | 'Outlet' | 'Body';

export interface SampledValue {
  value: string;
  context?: ReadingContext;
  measurand?: Measurand;
  location?: Location;
  unit?: UnitOfMeasure;
}

export interface MeterValue {
  timestamp: string;
  sampledValue: SampledValue[];
}

export interface IdTagInfo {
  status: AuthorizationStatus;
  expiryDate?: string;
  parentIdTag?: string;
}

export type RegistrationStatus = 'Accepted' | 'Pending' | 'Rejected';

export interface BootNotificationRequest {
  chargePointVendor: string;
  chargePointModel: string;
  chargePointSerialNumber?: string;
  firmwareVersion?: string;
  meterType?: string;
}

export interface StatusNotificationRequest {
  connectorId: number;
  errorCode: ChargePointErrorCode;
  status: ChargePointStatus;
  timestamp?: string;
  info?: string;
}

export interface MeterValuesRequest {
  connectorId: number;
  transactionId?: number;
  meterValue: MeterValue[];
}

export interface StartTransactionRequest {
  connectorId: number;
  idTag: string;
  meterStart: number;
  timestamp: string;
}

export interface StopTransactionRequest {
  transactionId: number;
  meterStop: number;
  timestamp: string;
  reason?: StopReason;
  idTag?: string;
  transactionData?: MeterValue[];
}

type Empty = Record<string, never>;

/** Calls the charge point makes, keyed by action, with the confirmation the schema guarantees. */
export interface OutgoingCalls {
  BootNotification: {
    req: BootNotificationRequest;
    conf: { status: RegistrationStatus; currentTime: string; interval: number };
  };
  Heartbeat: { req: Empty; conf: { currentTime: string } };
  StatusNotification: { req: StatusNotificationRequest; conf: Empty };
  MeterValues: { req: MeterValuesRequest; conf: Empty };
  Authorize: { req: { idTag: string }; conf: { idTagInfo: IdTagInfo } };
  StartTransaction: {
    req: StartTransactionRequest;
    conf: { transactionId: number; idTagInfo: IdTagInfo };
  };
  StopTransaction: { req: StopTransactionRequest; conf: { idTagInfo?: IdTagInfo } };
  FirmwareStatusNotification: { req: { status: FirmwareStatus }; conf: Empty };
  DiagnosticsStatusNotification: { req: { status: DiagnosticsStatus }; conf: Empty };
}

export type FirmwareStatus =
  | 'Downloaded'
  | 'DownloadFailed'
  | 'Downloading'
  | 'Idle'
  | 'InstallationFailed'
  | 'Installing'
  | 'Installed';

export type DiagnosticsStatus = 'Idle' | 'Uploaded' | 'UploadFailed' | 'Uploading';

export type TriggerableMessage =
  | 'BootNotification'
  | 'DiagnosticsStatusNotification'
  | 'FirmwareStatusNotification'
  | 'Heartbeat'
  | 'MeterValues'
  | 'StatusNotification';

export type AvailabilityType = 'Inoperative' | 'Operative';

export type ResetType = 'Hard' | 'Soft';

export interface ConfigurationKeyValue {
  key: string;
  readonly: boolean;
  value?: string;
}

/** Calls the central system makes that the simulator answers. */
export interface IncomingCalls {
  RemoteStartTransaction: {
    req: { idTag: string; connectorId?: number; chargingProfile?: unknown };
    conf: { status: 'Accepted' | 'Rejected' };
  };
  RemoteStopTransaction: {
    req: { transactionId: number };
    conf: { status: 'Accepted' | 'Rejected' };
  };
  ChangeConfiguration: {
    req: { key: string; value: string };
    conf: { status: 'Accepted' | 'Rejected' | 'RebootRequired' | 'NotSupported' };
  };
  GetConfiguration: {
    req: { key?: string[] };
    conf: { configurationKey?: ConfigurationKeyValue[]; unknownKey?: string[] };
  };
  TriggerMessage: {
    req: { requestedMessage: TriggerableMessage; connectorId?: number };
    conf: { status: 'Accepted' | 'Rejected' | 'NotImplemented' };
  };
  Reset: { req: { type: ResetType }; conf: { status: 'Accepted' | 'Rejected' } };
  UnlockConnector: {
    req: { connectorId: number };
    conf: { status: 'Unlocked' | 'UnlockFailed' | 'NotSupported' };
  };
  ChangeAvailability: {
    req: { connectorId: number; type: AvailabilityType };
    conf: { status: 'Accepted' | 'Rejected' | 'Scheduled' };
  };
  DataTransfer: {
    req: { vendorId: string; messageId?: string; data?: string };
    conf: { status: 'Accepted' | 'Rejected' | 'UnknownMessageId' | 'UnknownVendorId' };
  };
  ClearCache: { req: Empty; conf: { status: 'Accepted' | 'Rejected' } };
  SendLocalList: {
    req: {
      listVersion: number;
      updateType: 'Full' | 'Differential';
      localAuthorizationList?: {
        idTag: string;
        idTagInfo?: { status: string; expiryDate?: string; parentIdTag?: string };
      }[];
    };
    conf: { status: 'Accepted' | 'Failed' | 'NotSupported' | 'VersionMismatch' };
  };
  GetLocalListVersion: { req: Empty; conf: { listVersion: number } };
  UpdateFirmware: {
    req: { location: string; retrieveDate: string; retries?: number; retryInterval?: number };
    conf: Empty;
  };
  GetDiagnostics: {
    req: { location: string; retries?: number; retryInterval?: number };
    conf: { fileName?: string };
  };
  SetChargingProfile: {
    req: {
      connectorId: number;
      csChargingProfiles: {
        chargingProfileId: number;
        transactionId?: number;
        stackLevel: number;
        chargingProfilePurpose: 'ChargePointMaxProfile' | 'TxDefaultProfile' | 'TxProfile';
        chargingProfileKind: 'Absolute' | 'Recurring' | 'Relative';
        recurrencyKind?: 'Daily' | 'Weekly';
        chargingSchedule: ScheduleLike;
      };
    };
    conf: { status: 'Accepted' | 'Rejected' | 'NotSupported' };
  };
  ClearChargingProfile: {
    req: {
      id?: number;
      connectorId?: number;
      chargingProfilePurpose?: string;
      stackLevel?: number;
    };
    conf: { status: 'Accepted' | 'Unknown' };
  };
  GetCompositeSchedule: {
    req: { connectorId: number; duration: number; chargingRateUnit?: 'W' | 'A' };
    conf: {
      status: 'Accepted' | 'Rejected';
      connectorId?: number;
      scheduleStart?: string;
      chargingSchedule?: ScheduleLike & { duration: number; startSchedule: string };
    };
  };
}
