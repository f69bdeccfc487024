/**
 * What the operator API answers about files and jobs: the store's records, and the console's view
 * of them (it imports these types, so they import nothing).
 */
export type TransferKind = 'firmware' | 'log';

/** A file the gateway keeps: firmware an operator uploaded, or a log a charger sent. */
export interface TransferFile {
  fileId: string;
  kind: TransferKind;
  name: string;
  sizeBytes: number;
  sha256: string;
  chargerId: string | null;
  jobId: number | null;
  createdBy: string;
  createdAt: string;
}

/** One UpdateFirmware, GetDiagnostics or GetLog; `jobId` is its OCPP requestId. */
export interface TransferJob {
  jobId: number;
  chargerId: string;
  kind: TransferKind;
  firmwareFileId: string | null;
  logFileId: string | null;
  status: string;
  finished: boolean;
  requestedBy: string;
  requestedAt: string;
  updatedAt: string;
  urlExpiresAt: string;
}
