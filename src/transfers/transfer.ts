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
  /** Firmware with a signing certificate and signature, sent with every update of it. */
  signed: boolean;
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
  /** When the charger may fetch the firmware (null for a log). */
  retrieveAt: string | null;
}

/** A firmware file's signing: the PEM certificate and the base64 signature over the file. */
export interface FirmwareSigning {
  signingCertificate: string;
  signature: string;
}
