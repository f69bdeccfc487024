import type { MessageContent } from './cost-screen.js';
// OCPP 2.0.1 message shapes used by the simulator, transcribed from the JSON schemas that
// ocpp-rpc enforces in strict mode (node_modules/ocpp-rpc/lib/schemas/ocpp2_0_1.json). Optional
// fields the simulator never sends or reads are left out; every object is closed
// (additionalProperties: false) in the schemas.

export type ConnectorStatus = 'Available' | 'Occupied' | 'Reserved' | 'Unavailable' | 'Faulted';

export type ChargingState = 'Charging' | 'EVConnected' | 'SuspendedEV' | 'SuspendedEVSE' | 'Idle';

export type TriggerReason =
  | 'Authorized'
  | 'CablePluggedIn'
  | 'ChargingRateChanged'
  | 'ChargingStateChanged'
  | 'Deauthorized'
  | 'EnergyLimitReached'
  | 'EVCommunicationLost'
  | 'EVConnectTimeout'
  | 'MeterValueClock'
  | 'MeterValuePeriodic'
  | 'TimeLimitReached'
  | 'Trigger'
  | 'UnlockCommand'
  | 'StopAuthorized'
  | 'EVDeparted'
  | 'EVDetected'
  | 'RemoteStop'
  | 'RemoteStart'
  | 'AbnormalCondition'
  | 'SignedDataReceived'
  | 'ResetCommand'
  // 2.1 only: a transactionLimit taken, the cost limit reached, a transaction's tariff changed.
  | 'LimitSet'
  | 'CostLimitReached'
  | 'TariffChanged';

/** ReasonEnumType: why a transaction stopped. */
export type Reason =
  | 'DeAuthorized'
  | 'EmergencyStop'
  | 'EnergyLimitReached'
  | 'EVDisconnected'
  | 'GroundFault'
  | 'ImmediateReset'
  | 'Local'
  | 'LocalOutOfCredit'
  | 'MasterPass'
  | 'Other'
  | 'OvercurrentFault'
  | 'PowerLoss'
  | 'PowerQuality'
  | 'Reboot'
  | 'Remote'
  | 'SOCLimitReached'
  | 'StoppedByEV'
  | 'TimeLimitReached'
  | 'Timeout';

export type ReadingContext =
  | 'Interruption.Begin'
  | 'Interruption.End'
  | 'Other'
  | 'Sample.Clock'
  | 'Sample.Periodic'
  | 'Transaction.Begin'
  | 'Transaction.End'
  | 'Trigger';

export type IdTokenKind =
  | 'Central'
  | 'eMAID'
  | 'ISO14443'
  | 'ISO15693'
  | 'KeyCode'
  | 'Local'
  | 'MacAddress'
  | 'NoAuthorization';

export interface IdToken {
  idToken: string;
  type: IdTokenKind;
}

export type AuthorizationStatus =
  | 'Accepted'
  | 'Blocked'
  | 'ConcurrentTx'
  | 'Expired'
  | 'Invalid'
  | 'NoCredit'
  | 'NotAllowedTypeEVSE'
  | 'NotAtThisLocation'
  | 'NotAtThisTime'
  | 'Unknown';

export interface SampledValue {
  /** A number in 2.0.1 (a string in 1.6). */
  value: number;
  context?: ReadingContext;
  /** The simulator's meter only measures names that 1.6 and 2.0.1 share. */
  measurand?: string;
  location?: 'Body' | 'Cable' | 'EV' | 'Inlet' | 'Outlet';
  unitOfMeasure?: { unit?: string; multiplier?: number };
}

export interface MeterValue {
  timestamp: string;
  sampledValue: SampledValue[];
}

export interface EvseRef {
  id: number;
  connectorId?: number;
}

export interface Component {
  name: string;
  instance?: string;
  evse?: EvseRef;
}

export interface Variable {
  name: string;
  instance?: string;
}

export type BootReason =
  | 'ApplicationReset'
  | 'FirmwareUpdate'
  | 'LocalReset'
  | 'PowerUp'
  | 'RemoteReset'
  | 'ScheduledReset'
  | 'Triggered'
  | 'Unknown'
  | 'Watchdog';

export interface TransactionInfo {
  transactionId: string;
  chargingState?: ChargingState;
  timeSpentCharging?: number;
  stoppedReason?: Reason;
  remoteStartId?: number;
  /** 2.1: the tariff the station computes the cost with. */
  tariffId?: string;
  /** 2.1: the limit the station holds (on a LimitSet event). */
  transactionLimit?: TransactionLimit;
}

/** 2.1 TransactionLimitType: maxEnergy Wh since the start, maxCost in the tariff's currency. */
export interface TransactionLimit {
  maxEnergy?: number;
  maxCost?: number;
  maxTime?: number;
  maxSoC?: number;
}

/** 2.1 TotalPriceType / PriceType without tax rates. */
export interface PriceAmount {
  exclTax?: number;
  inclTax?: number;
}

/** 2.1 CostDetailsType: the cost the station computed from its tariff. */
export interface CostDetails {
  chargingPeriods?: {
    tariffId?: string;
    startPeriod: string;
    dimensions?: { type: 'Energy' | 'ChargingTime' | 'IdleTIme'; volume: number }[];
  }[];
  totalCost: {
    currency: string;
    typeOfCost: 'NormalCost' | 'MinCost' | 'MaxCost';
    fixed?: PriceAmount;
    energy?: PriceAmount;
    total: PriceAmount;
  };
  totalUsage: { energy: number; chargingTime: number; idleTime: number };
}

export interface TransactionEventRequest {
  eventType: 'Started' | 'Updated' | 'Ended';
  timestamp: string;
  triggerReason: TriggerReason;
  seqNo: number;
  offline?: boolean;
  transactionInfo: TransactionInfo;
  evse?: EvseRef;
  idToken?: IdToken;
  meterValue?: MeterValue[];
  /** 2.1: running cost (Updated) or final cost (Ended), computed by the station. */
  costDetails?: CostDetails;
}

export interface TransactionEventResponse {
  /** 2.1: the limit the station is to enforce from now on. */
  transactionLimit?: TransactionLimit;
  totalCost?: number;
  idTokenInfo?: { status: AuthorizationStatus; personalMessage?: MessageContent };
  updatedPersonalMessage?: MessageContent;
}

export interface DcChargingParameters {
  evMaxCurrent: number;
  evMaxVoltage: number;
  energyAmount?: number;
  evMaxPower?: number;
  stateOfCharge?: number;
  evEnergyCapacity?: number;
}

export interface EventData {
  eventId: number;
  timestamp: string;
  trigger: 'Alerting' | 'Delta' | 'Periodic';
  actualValue: string;
  techInfo?: string;
  cleared?: boolean;
  transactionId?: string;
  component: Component;
  variable: Variable;
  eventNotificationType:
    'HardWiredNotification' | 'HardWiredMonitor' | 'PreconfiguredMonitor' | 'CustomMonitor';
}

export type Mutability = 'ReadOnly' | 'WriteOnly' | 'ReadWrite';
export type DataType = 'string' | 'decimal' | 'integer' | 'boolean' | 'OptionList' | 'MemberList';

export interface ReportData {
  component: Component;
  variable: Variable;
  variableAttribute: {
    type?: 'Actual';
    value?: string;
    mutability?: Mutability;
    persistent?: boolean;
    constant?: boolean;
  }[];
  variableCharacteristics?: {
    unit?: string;
    dataType: DataType;
    valuesList?: string;
    supportsMonitoring: boolean;
  };
}

export type MessageTrigger =
  | 'BootNotification'
  | 'LogStatusNotification'
  | 'FirmwareStatusNotification'
  | 'Heartbeat'
  | 'MeterValues'
  | 'SignChargingStationCertificate'
  | 'SignV2GCertificate'
  | 'StatusNotification'
  | 'TransactionEvent'
  | 'SignCombinedCertificate'
  | 'PublishFirmwareStatusNotification';

export type OperationalStatus = 'Inoperative' | 'Operative';
export type ResetType = 'Immediate' | 'OnIdle';
export type Attribute = 'Actual' | 'Target' | 'MinSet' | 'MaxSet';

export interface GetVariableResult {
  attributeStatus:
    'Accepted' | 'Rejected' | 'UnknownComponent' | 'UnknownVariable' | 'NotSupportedAttributeType';
  attributeType?: Attribute;
  attributeValue?: string;
  component: Component;
  variable: Variable;
}

export interface SetVariableResult {
  attributeStatus:
    | 'Accepted'
    | 'Rejected'
    | 'UnknownComponent'
    | 'UnknownVariable'
    | 'NotSupportedAttributeType'
    | 'RebootRequired';
  attributeType?: Attribute;
  component: Component;
  variable: Variable;
}
