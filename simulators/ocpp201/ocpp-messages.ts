import type { MessageContent } from './cost-screen.js';
import type { ScheduleLike } from '../shared/charging-profile.js';
// The OCPP 2.0.1 calls the simulator makes and answers, keyed by action, with their request and
// response shapes (see ocpp-types.ts for where they come from).
import type {
  Attribute,
  AuthorizationStatus,
  BootReason,
  Component,
  ConnectorStatus,
  DcChargingParameters,
  EventData,
  EvseRef,
  GetVariableResult,
  IdToken,
  MessageTrigger,
  MeterValue,
  OperationalStatus,
  ReportData,
  ResetType,
  SetVariableResult,
  TransactionEventRequest,
  TransactionEventResponse,
  Variable,
} from './ocpp-types.js';

type Empty = Record<string, never>;

export type FirmwareStatus =
  | 'Downloaded'
  | 'DownloadFailed'
  | 'Downloading'
  | 'Idle'
  | 'InstallationFailed'
  | 'Installing'
  | 'Installed'
  | 'InstallRebooting';

export type UploadLogStatus = 'Idle' | 'Uploaded' | 'UploadFailure' | 'Uploading';
type RegistrationStatus = 'Accepted' | 'Pending' | 'Rejected';

/** Calls the charging station makes, keyed by action, with the response the schema guarantees. */
export interface OutgoingCalls {
  BootNotification: {
    req: {
      reason: BootReason;
      chargingStation: {
        model: string;
        vendorName: string;
        serialNumber?: string;
        firmwareVersion?: string;
      };
    };
    conf: { status: RegistrationStatus; currentTime: string; interval: number };
  };
  Heartbeat: { req: Empty; conf: { currentTime: string } };
  FirmwareStatusNotification: { req: { status: FirmwareStatus; requestId?: number }; conf: Empty };
  LogStatusNotification: { req: { status: UploadLogStatus; requestId?: number }; conf: Empty };
  StatusNotification: {
    req: {
      timestamp: string;
      connectorStatus: ConnectorStatus;
      evseId: number;
      connectorId: number;
    };
    conf: Empty;
  };
  MeterValues: { req: { evseId: number; meterValue: MeterValue[] }; conf: Empty };
  TransactionEvent: { req: TransactionEventRequest; conf: TransactionEventResponse };
  Authorize: {
    req: { idToken: IdToken };
    conf: { idTokenInfo: { status: AuthorizationStatus; personalMessage?: MessageContent } };
  };
  NotifyEVChargingNeeds: {
    req: {
      evseId: number;
      chargingNeeds: {
        requestedEnergyTransfer: 'DC' | 'AC_single_phase' | 'AC_two_phase' | 'AC_three_phase';
        dcChargingParameters?: DcChargingParameters;
      };
    };
    conf: { status: 'Accepted' | 'Rejected' | 'Processing' };
  };
  NotifyEvent: {
    req: { generatedAt: string; seqNo: number; tbc?: boolean; eventData: EventData[] };
    conf: Empty;
  };
  NotifyReport: {
    req: {
      requestId: number;
      generatedAt: string;
      seqNo: number;
      tbc?: boolean;
      reportData?: ReportData[];
    };
    conf: Empty;
  };
}

type StartStopStatus = { status: 'Accepted' | 'Rejected' };

/** Calls the CSMS makes that the simulator answers. */
export interface IncomingCalls {
  RequestStartTransaction: {
    req: {
      evseId?: number;
      remoteStartId: number;
      idToken: IdToken;
      groupIdToken?: IdToken;
      chargingProfile?: object;
    };
    conf: StartStopStatus & { transactionId?: string };
  };
  RequestStopTransaction: { req: { transactionId: string }; conf: StartStopStatus };
  GetVariables: {
    req: {
      getVariableData: { attributeType?: Attribute; component: Component; variable: Variable }[];
    };
    conf: { getVariableResult: GetVariableResult[] };
  };
  SetVariables: {
    req: {
      setVariableData: {
        attributeType?: Attribute;
        attributeValue: string;
        component: Component;
        variable: Variable;
      }[];
    };
    conf: { setVariableResult: SetVariableResult[] };
  };
  GetBaseReport: {
    req: {
      requestId: number;
      reportBase: 'ConfigurationInventory' | 'FullInventory' | 'SummaryInventory';
    };
    conf: { status: 'Accepted' | 'Rejected' | 'NotSupported' | 'EmptyResultSet' };
  };
  Reset: {
    req: { type: ResetType; evseId?: number };
    conf: { status: 'Accepted' | 'Rejected' | 'Scheduled' };
  };
  TriggerMessage: {
    req: { requestedMessage: MessageTrigger; evse?: EvseRef };
    conf: { status: 'Accepted' | 'Rejected' | 'NotImplemented' };
  };
  ChangeAvailability: {
    req: { evse?: EvseRef; operationalStatus: OperationalStatus };
    conf: { status: 'Accepted' | 'Rejected' | 'Scheduled' };
  };
  UnlockConnector: {
    req: { evseId: number; connectorId: number };
    conf: {
      status: 'Unlocked' | 'UnlockFailed' | 'OngoingAuthorizedTransaction' | 'UnknownConnector';
    };
  };
  SetDisplayMessage: {
    req: { message: { id: number; transactionId?: string; message: MessageContent } };
    conf: { status: 'Accepted' };
  };
  CostUpdated: { req: { totalCost: number; transactionId: string }; conf: Empty };
  GetTransactionStatus: {
    req: { transactionId?: string };
    conf: { ongoingIndicator?: boolean; messagesInQueue: boolean };
  };
  DataTransfer: {
    req: { vendorId: string; messageId?: string; data?: unknown };
    conf: { status: 'Accepted' | 'Rejected' | 'UnknownMessageId' | 'UnknownVendorId' };
  };
  ClearCache: { req: Empty; conf: { status: 'Accepted' | 'Rejected' } };
  SendLocalList: {
    req: {
      versionNumber: number;
      updateType: 'Full' | 'Differential';
      localAuthorizationList?: {
        idToken: IdToken;
        idTokenInfo?: { status: AuthorizationStatus; cacheExpiryDateTime?: string };
      }[];
    };
    conf: { status: 'Accepted' | 'Failed' | 'VersionMismatch' };
  };
  GetLocalListVersion: { req: Empty; conf: { versionNumber: number } };
  UpdateFirmware: {
    req: {
      requestId: number;
      retries?: number;
      retryInterval?: number;
      firmware: { location: string; retrieveDateTime: string };
    };
    conf: { status: 'Accepted' | 'Rejected' | 'AcceptedCanceled' };
  };
  GetLog: {
    req: {
      logType: 'DiagnosticsLog' | 'SecurityLog';
      requestId: number;
      retries?: number;
      retryInterval?: number;
      log: { remoteLocation: string };
    };
    conf: { status: 'Accepted' | 'Rejected' | 'AcceptedCanceled'; filename?: string };
  };
  SetChargingProfile: {
    req: {
      evseId: number;
      chargingProfile: {
        id: number;
        stackLevel: number;
        chargingProfilePurpose:
          | 'ChargingStationMaxProfile'
          | 'TxDefaultProfile'
          | 'TxProfile'
          | 'ChargingStationExternalConstraints';
        chargingProfileKind: string;
        recurrencyKind?: string;
        transactionId?: string;
        chargingSchedule: ScheduleLike[];
      };
    };
    conf: { status: 'Accepted' | 'Rejected' };
  };
  ClearChargingProfile: {
    req: {
      chargingProfileId?: number;
      chargingProfileCriteria?: {
        evseId?: number;
        chargingProfilePurpose?: string;
        stackLevel?: number;
      };
    };
    conf: { status: 'Accepted' | 'Unknown' };
  };
  GetCompositeSchedule: {
    req: { duration: number; chargingRateUnit?: 'W' | 'A'; evseId: number };
    conf: {
      status: 'Accepted' | 'Rejected';
      schedule?: {
        evseId: number;
        duration: number;
        scheduleStart: string;
        chargingRateUnit: 'W' | 'A';
        chargingSchedulePeriod: { startPeriod: number; limit: number }[];
      };
    };
  };
}
