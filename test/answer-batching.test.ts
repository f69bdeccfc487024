import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJsonServer } from '../src/api/server.js';
import { ApiError } from '../src/api/errors.js';
import { createLogger } from '../src/shared/log.js';
import type { FastifyInstance } from 'fastify';

/**
 * The API writes each answer at the end of the event loop's turn (src/api/server.ts): a callback
 * the handler schedules for the same turn's check phase runs before the answer's first byte is
 * written, whichever way the answer ends (a result or an error). An answer ready as the server
 * starts closing is still written, and pipelined requests get their answers whole and in order.
 */

let app: FastifyInstance;
let base: string;
const sentWhenTurnEnded: boolean[] = [];

beforeAll(async () => {
  app = createJsonServer({ log: createLogger('silent'), tls: undefined, bodyLimitBytes: 65_536 });
  app.get<{ Querystring: { n?: string } }>('/answer', async (request, reply) => {
    setImmediate(() => sentWhenTurnEnded.push(reply.raw.headersSent));
    return { n: Number(request.query.n ?? 0) };
  });
  app.get('/refusal', async (_request, reply) => {
    setImmediate(() => sentWhenTurnEnded.push(reply.raw.headersSent));
    // A code no catalogue holds: ApiError takes only catalogued codes, so it is set by hand.
    throw Object.assign(new ApiError('invalid_request', 'refused'), {
      status: 409,
      code: 'conflict_for_test',
    });
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app.close();
});

describe('answers are written at the end of the turn', () => {
  it('a result is not written before the turn that produced it ends', async () => {
    sentWhenTurnEnded.length = 0;
    const res = await fetch(`${base}/answer?n=7`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ n: 7 });
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(sentWhenTurnEnded).toEqual([false]);
  });

  it('nor is an error answer, which keeps the API shape and headers', async () => {
    sentWhenTurnEnded.length = 0;
    const res = await fetch(`${base}/refusal`);
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error: { code: 'conflict_for_test', message: 'refused' },
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(sentWhenTurnEnded).toEqual([false]);
  });

  it('an answer still waiting when the server starts closing is written before it closes', async () => {
    const closing = createJsonServer({
      log: createLogger('silent'),
      tls: undefined,
      bodyLimitBytes: 65_536,
    });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let waitingInHandler = false;
    closing.get('/slow', async () => {
      waitingInHandler = true;
      await gate;
      return { done: true };
    });
    const url = await closing.listen({ host: '127.0.0.1', port: 0 });
    const answer = fetch(`${url}/slow`);
    while (!waitingInHandler) await new Promise((r) => setTimeout(r, 5));
    release(); // the answer is ready in this turn, and the server closes in the same turn
    const closed = closing.close();
    const res = await answer;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    await closed;
  });

  it('pipelined requests on one connection get whole answers, in order', async () => {
    const { port } = new URL(base);
    const count = 25;
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    const requests = Array.from(
      { length: count },
      (_, i) => `GET /answer?n=${i} HTTP/1.1\r\nHost: t\r\n\r\n`,
    ).join('');
    socket.write(requests); // one write: the server reads them all in one turn
    const bodies = (): string[] => received.match(/\{"n":\d+\}/g) ?? [];
    for (let waited = 0; bodies().length < count && waited < 5000; waited += 10) {
      await new Promise((r) => setTimeout(r, 10));
    }
    socket.destroy();
    expect(received.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(count);
    expect(bodies()).toEqual(Array.from({ length: count }, (_, i) => `{"n":${i}}`));
  });
});
