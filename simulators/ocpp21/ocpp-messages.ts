import type { Tariff } from './tariff.js';

// The OCPP 2.1 calls the station answers beyond 2.0.1's (ocpp2_1.json in ocpp-rpc): local cost
// calculation's tariffs (I-section). Everything else is 2.0.1's shapes, which 2.1 keeps.

type TariffStatus<S extends string> = { status: S };

export interface IncomingCalls21 {
  ChangeTransactionTariff: {
    req: { transactionId: string; tariff: Tariff };
    conf: TariffStatus<
      | 'Accepted'
      | 'Rejected'
      | 'TooManyElements'
      | 'ConditionNotSupported'
      | 'TxNotFound'
      | 'NoCurrencyChange'
    >;
  };
  SetDefaultTariff: {
    req: { evseId: number; tariff: Tariff };
    conf: TariffStatus<
      'Accepted' | 'Rejected' | 'TooManyElements' | 'ConditionNotSupported' | 'DuplicateTariffId'
    >;
  };
  GetTariffs: {
    req: { evseId: number };
    conf: TariffStatus<'Accepted' | 'Rejected' | 'NoTariff'> & {
      tariffAssignments?: {
        tariffId: string;
        tariffKind: 'DefaultTariff' | 'DriverTariff';
        evseIds?: number[];
        idTokens?: string[];
      }[];
    };
  };
  ClearTariffs: {
    req: { tariffIds?: string[]; evseId?: number };
    conf: {
      clearTariffsResult: { tariffId?: string; status: 'Accepted' | 'Rejected' | 'NoTariff' }[];
    };
  };
}
