import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import { ApiError } from '../../api/errors.js';
import { errorBody } from '../../api/schemas.js';
import {
  OPERATOR_API_ERRORS,
  type OperatorApiErrorCode,
} from '../../api/operator-error-catalogue.js';
import type { JobAnswer } from '../../transfers/transfers.js';
import type { TransferKind } from '../../transfers/transfer-store.js';
import type { OperatorDeps } from '../api.js';
import { readSigning } from '../../transfers/firmware-signing.js';
import { asApiError } from '../errors.js';
import { operatorAction } from '../guard.js';
import { entityId, errorResponses, objectParams } from '../schemas.js';

/** An upload's bytes, unread: nothing of it is enumerable, so the audit trail records `{}`. */
class RawBody {
  readonly #stream: Readable;
  constructor(stream: Readable) {
    this.#stream = stream;
  }
  get stream(): Readable {
    return this.#stream;
  }
}

/**
 * A route's answers: its success, each error it really gives by status (described by their codes,
 * so the OpenAPI document names them), and the 4XX / 5XX every operator route may give.
 */
const answers = (ok: object, status = 200, ...errors: OperatorApiErrorCode[]) => {
  const byStatus = new Map<number, OperatorApiErrorCode[]>();
  for (const code of errors) {
    const at = OPERATOR_API_ERRORS[code].status;
    byStatus.set(at, [...(byStatus.get(at) ?? []), code]);
  }
  return {
    [status]: ok,
    ...Object.fromEntries(
      [...byStatus].map(([at, codes]) => [at, { ...errorBody, description: codes.join(', ') }]),
    ),
    ...errorResponses,
  };
};

const transferFile = {
  type: 'object',
  properties: {
    fileId: { type: 'string' },
    kind: { type: 'string', enum: ['firmware', 'log'] },
    name: { type: 'string' },
    sizeBytes: { type: 'integer' },
    sha256: { type: 'string' },
    chargerId: { type: ['string', 'null'] },
    jobId: { type: ['integer', 'null'] },
    createdBy: { type: 'string' },
    createdAt: { type: 'string' },
    signed: {
      type: 'boolean',
      description: 'Firmware uploaded with a signing certificate and signature, sent with it',
    },
  },
  required: [
    'fileId',
    'kind',
    'name',
    'sizeBytes',
    'sha256',
    'chargerId',
    'jobId',
    'createdBy',
    'createdAt',
    'signed',
  ],
} as const;

const transferJob = {
  type: 'object',
  properties: {
    jobId: { type: 'integer', description: 'Also the OCPP requestId' },
    chargerId: { type: 'string' },
    kind: { type: 'string', enum: ['firmware', 'log'] },
    firmwareFileId: { type: ['string', 'null'] },
    logFileId: { type: ['string', 'null'] },
    status: {
      type: 'string',
      description:
        'Requested, Accepted, Rejected, Unanswered, then the charger’s own status words; Cancelled or TimedOut when the gateway ended it',
    },
    finished: { type: 'boolean' },
    requestedBy: { type: 'string' },
    requestedAt: { type: 'string' },
    updatedAt: { type: 'string' },
    urlExpiresAt: { type: 'string' },
    retrieveAt: { type: ['string', 'null'] },
  },
  required: [
    'jobId',
    'chargerId',
    'kind',
    'firmwareFileId',
    'logFileId',
    'status',
    'finished',
    'requestedBy',
    'requestedAt',
    'updatedAt',
    'urlExpiresAt',
    'retrieveAt',
  ],
} as const;

const jobAnswer = {
  type: 'object',
  properties: {
    job: transferJob,
    status: { type: 'string' },
    accepted: { type: 'boolean' },
    reply: {},
  },
  required: ['job', 'status', 'accepted', 'reply'],
} as const;

const fileName = { type: 'string', minLength: 1, maxLength: 200 } as const;
const jobParams = {
  type: 'object',
  properties: { jobId: { type: 'string', pattern: '^[1-9][0-9]{0,14}$' } },
  required: ['jobId'],
  additionalProperties: false,
} as const;

interface UploadQuery {
  name: string;
  signingCertificate?: string;
  signature?: string;
}
const limit = { type: 'string', pattern: '^([1-9]|[1-9][0-9]|[1-4][0-9]{2}|500)$' } as const;

/**
 * Firmware and logs over the site LAN: firmware files operators upload (raw bytes), the logs
 * chargers sent, and the jobs that ask a charger to update or to upload (docs/firmware-and-logs.md).
 */
export function registerTransferRoutes(app: FastifyInstance, deps: OperatorDeps): void {
  const transfers = deps.transfers;
  const audited = (request: { auditResult?: Record<string, unknown> }, a: JobAnswer) => {
    request.auditResult = { jobId: a.job.jobId, status: a.status, accepted: a.accepted };
    return a;
  };

  // A scope of its own: only here is a body raw bytes, streamed to disk (transfers.maxFirmwareBytes).
  void app.register(async (scope) => {
    scope.addContentTypeParser('application/octet-stream', (_request, payload, done) =>
      done(null, new RawBody(payload)),
    );
    scope.post<{ Querystring: UploadQuery }>(
      '/firmware',
      {
        schema: {
          summary:
            'Upload a firmware file (the raw bytes, Content-Type application/octet-stream), signed or not',
          description:
            'A signed file names its signing certificate (PEM) and signature (base64) in the query; the signature must verify over the file with the certificate’s key (422 invalid_signature), and both go with every update of it.',
          tags: ['firmware and logs'],
          querystring: {
            type: 'object',
            properties: {
              name: fileName,
              signingCertificate: { type: 'string', minLength: 1, maxLength: 5500 },
              signature: { type: 'string', minLength: 1, maxLength: 800 },
            },
            required: ['name'],
            additionalProperties: false,
          },
          response: answers(
            transferFile,
            201,
            'invalid_request',
            'payload_too_large',
            'unsupported_media_type',
            'invalid_signature',
          ),
        },
        ...operatorAction('firmware.upload'),
      },
      async (request, reply) => {
        const body = request.body;
        if (!(body instanceof RawBody)) {
          throw new ApiError('unsupported_media_type', 'send the file as application/octet-stream');
        }
        const signing = readSigning(request.query);
        if (typeof signing === 'string') throw new ApiError('invalid_request', signing);
        const operator = request.operator?.name ?? 'unknown';
        const file = await asApiError(() =>
          transfers.addFirmware(body.stream, request.query.name, operator, signing),
        );
        // The audit trail keeps what was stored, not the stream.
        request.body = { name: file.name, sizeBytes: file.sizeBytes, sha256: file.sha256 };
        request.auditResult = { fileId: file.fileId, signed: file.signed };
        return reply.code(201).send(file);
      },
    );
  });

  for (const kind of ['firmware', 'log'] as const) {
    app.get<{ Querystring: { limit?: string } }>(
      kind === 'firmware' ? '/firmware' : '/logs',
      {
        schema: {
          summary:
            kind === 'firmware'
              ? 'Firmware files operators uploaded, newest first'
              : 'Diagnostics and logs chargers uploaded, newest first',
          tags: ['firmware and logs'],
          querystring: { type: 'object', properties: { limit }, additionalProperties: false },
          response: answers({
            type: 'object',
            properties: { files: { type: 'array', items: transferFile } },
            required: ['files'],
          }),
        },
      },
      async (request) => ({
        files: transfers.files(kind as TransferKind, Number(request.query.limit ?? 100)),
      }),
    );
  }

  app.get<{ Params: { fileId: string } }>(
    '/files/:fileId',
    {
      schema: {
        summary: 'Download a firmware file or a charger’s log',
        tags: ['firmware and logs'],
        params: objectParams('fileId'),
        response: {
          ...answers({}, 200, 'file_not_found'),
          200: {
            description: 'The file’s bytes, as an attachment named by the file',
            content: {
              'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const file = transfers.file(request.params.fileId);
      if (!file) throw new ApiError('file_not_found', `no file with id ${request.params.fileId}`);
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', String(file.sizeBytes))
        .header('content-disposition', `attachment; filename="${file.name}"`)
        .send(transfers.readFile(file));
    },
  );

  app.delete<{ Params: { fileId: string } }>(
    '/files/:fileId',
    {
      schema: {
        summary:
          'Delete a firmware file or a charger’s log (refused while an unfinished job uses it)',
        tags: ['firmware and logs'],
        params: objectParams('fileId'),
        response: answers(transferFile, 200, 'file_not_found', 'file_in_use'),
      },
      ...operatorAction('file.delete'),
    },
    async (request) => {
      const file = asApiError(() =>
        transfers.keeping.deleteFile(request.params.fileId, request.operator?.name ?? 'unknown'),
      );
      request.auditResult = { kind: file.kind, name: file.name, sha256: file.sha256 };
      return file;
    },
  );

  app.post<{ Params: { chargerId: string }; Body: { fileId: string; retrieveAt?: string } }>(
    '/chargers/:chargerId/firmware-update',
    {
      schema: {
        summary:
          'Tell a charger to fetch and install a firmware file (refused while a session is open)',
        tags: ['firmware and logs'],
        params: objectParams('chargerId'),
        body: {
          type: 'object',
          properties: {
            fileId: entityId,
            retrieveAt: { type: 'string', format: 'date-time' },
          },
          required: ['fileId'],
          additionalProperties: false,
        },
        response: answers(
          jobAnswer,
          200,
          'charger_not_found',
          'file_not_found',
          'charger_busy',
          'charger_offline',
          'charger_timeout',
        ),
      },
      ...operatorAction('charger.firmware.update'),
    },
    async (request) =>
      audited(
        request,
        await asApiError(() =>
          transfers.updateFirmware(
            request.params.chargerId,
            request.body.fileId,
            request.operator?.name ?? 'unknown',
            request.body.retrieveAt,
          ),
        ),
      ),
  );

  app.post<{ Params: { chargerId: string } }>(
    '/chargers/:chargerId/log-request',
    {
      schema: {
        summary: 'Ask a charger to upload its diagnostics (1.6) or its diagnostics log (2.0.1)',
        tags: ['firmware and logs'],
        params: objectParams('chargerId'),
        response: answers(
          jobAnswer,
          200,
          'charger_not_found',
          'charger_offline',
          'charger_timeout',
        ),
      },
      ...operatorAction('charger.log.request'),
    },
    async (request) =>
      audited(
        request,
        await asApiError(() =>
          transfers.requestLog(request.params.chargerId, request.operator?.name ?? 'unknown'),
        ),
      ),
  );

  app.get<{ Querystring: { chargerId?: string; kind?: TransferKind; limit?: string } }>(
    '/transfer-jobs',
    {
      schema: {
        summary: 'Firmware and log jobs, newest first, with their latest status',
        tags: ['firmware and logs'],
        querystring: {
          type: 'object',
          properties: {
            chargerId: entityId,
            kind: { type: 'string', enum: ['firmware', 'log'] },
            limit,
          },
          additionalProperties: false,
        },
        response: answers({
          type: 'object',
          properties: { jobs: { type: 'array', items: transferJob } },
          required: ['jobs'],
        }),
      },
    },
    async (request) => ({
      jobs: transfers.jobs({
        ...(request.query.chargerId === undefined ? {} : { chargerId: request.query.chargerId }),
        ...(request.query.kind === undefined ? {} : { kind: request.query.kind }),
        limit: Number(request.query.limit ?? 100),
      }),
    }),
  );

  app.get<{ Params: { jobId: string } }>(
    '/transfer-jobs/:jobId',
    {
      schema: {
        summary: 'One firmware or log job with every status the charger reported',
        tags: ['firmware and logs'],
        params: jobParams,
        response: answers(
          {
            type: 'object',
            properties: {
              job: transferJob,
              history: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    status: { type: 'string' },
                    detail: { type: ['string', 'null'] },
                    at: { type: 'string' },
                  },
                  required: ['status', 'detail', 'at'],
                },
              },
            },
            required: ['job', 'history'],
          },
          200,
          'job_not_found',
        ),
      },
    },
    async (request) => {
      const found = transfers.jobWithHistory(Number(request.params.jobId));
      if (!found) throw new ApiError('job_not_found', `no job ${request.params.jobId}`);
      return found;
    },
  );

  app.post<{ Params: { jobId: string } }>(
    '/transfer-jobs/:jobId/cancel',
    {
      schema: {
        summary:
          'Cancel an unfinished job: its URL is no longer served and it ends Cancelled (nothing is sent to the charger)',
        tags: ['firmware and logs'],
        params: jobParams,
        response: answers(
          {
            type: 'object',
            properties: { job: transferJob },
            required: ['job'],
          },
          200,
          'job_not_found',
          'job_finished',
        ),
      },
      ...operatorAction('transfer.cancel'),
    },
    async (request) => {
      const job = asApiError(() =>
        transfers.cancel(Number(request.params.jobId), request.operator?.name ?? 'unknown'),
      );
      request.auditResult = { chargerId: job.chargerId, kind: job.kind };
      return { job };
    },
  );
}
