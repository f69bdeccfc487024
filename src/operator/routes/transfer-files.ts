import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { ApiError } from '../../api/errors.js';
import { asApiError } from '../errors.js';
import { firstFilePart } from './multipart.js';
import { TRANSFER_PREFIX, type Transfers } from '../../transfers/transfers.js';

/** Room for multipart headers and boundaries around a log of the largest size. */
const MULTIPART_OVERHEAD = 64 * 1024;

const token = { type: 'string', minLength: 20, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' };
const fileName = { type: 'string', minLength: 1, maxLength: 200 };

interface Params {
  token: string;
  name?: string;
}

/**
 * The routes chargers use, outside /admin/v1 and its credentials: the URL's token is the
 * permission (transfers.ts). Firmware is a plain GET; a log comes as a POST of multipart/form-data
 * (1.6 diagnostics as chargers send them) or as the raw bytes of a PUT or POST (2.0.1 logs).
 * Nothing here logs a URL: the token would be in it.
 */
export function registerTransferRoutes(
  app: FastifyInstance,
  transfers: Transfers,
  maxLogBytes: number,
): void {
  void app.register(
    async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

      scope.get<{ Params: Params }>(
        '/firmware/:token/:name',
        {
          schema: {
            hide: true,
            params: {
              type: 'object',
              properties: { token, name: fileName },
              required: ['token', 'name'],
            },
          },
        },
        async (request, reply) => {
          const { file, stream } = asApiError(() => transfers.download(request.params.token));
          return reply
            .header('content-type', 'application/octet-stream')
            .header('content-length', String(file.sizeBytes))
            .header('content-disposition', `attachment; filename="${file.name}"`)
            .header('cache-control', 'no-store')
            .send(stream);
        },
      );

      for (const path of ['/logs/:token', '/logs/:token/:name']) {
        scope.route<{ Params: Params }>({
          method: ['POST', 'PUT'],
          url: path,
          schema: {
            hide: true,
            params: {
              type: 'object',
              properties: { token, name: fileName },
              required: ['token'],
            },
          },
          handler: async (request, reply) => {
            const file = await asApiError(() => receive(request, transfers, maxLogBytes));
            return reply
              .code(201)
              .send({ fileId: file.fileId, name: file.name, sizeBytes: file.sizeBytes });
          },
        });
      }
    },
    { prefix: TRANSFER_PREFIX },
  );
}

async function receive(
  request: FastifyRequest<{ Params: Params }>,
  transfers: Transfers,
  maxLogBytes: number,
) {
  const declared = Number(request.headers['content-length'] ?? NaN);
  const contentType = request.headers['content-type'] ?? '';
  const multipart = /^multipart\/form-data/i.test(contentType);
  const limit = multipart ? maxLogBytes + MULTIPART_OVERHEAD : maxLogBytes;
  if (declared > limit) {
    throw new ApiError('payload_too_large', `the file is larger than ${maxLogBytes} bytes`);
  }
  transfers.checkUpload(request.params.token);
  const body = request.body as Readable | undefined;
  if (!body) throw new ApiError('invalid_request', 'the upload has no body');
  if (!multipart)
    return transfers.receiveLog(request.params.token, body, request.params.name ?? null);
  const part = firstFilePart(contentType, await collect(body, limit, maxLogBytes));
  if (!part) throw new ApiError('invalid_request', 'the multipart body has no file part');
  return transfers.receiveLog(
    request.params.token,
    part.data,
    part.fileName ?? request.params.name ?? null,
  );
}

async function collect(body: Readable, limit: number, maxLogBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body.iterator({ destroyOnReturn: false })) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size > limit) {
      throw new ApiError('payload_too_large', `the file is larger than ${maxLogBytes} bytes`);
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}
