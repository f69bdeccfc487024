import type { FastifyInstance } from 'fastify';
import type { OperatorDeps } from '../api.js';
import { csvResponse, csvRows, sendCsv } from '../csv.js';
import type { LedgerFilter } from '../read-model/ledger.js';
import { query } from '../schemas.js';
import { ledgerFilters } from './money.js';
import { sessionFilter, sessionFilters, type SessionQuery } from './sessions.js';

/** Sessions and ledger entries as CSV: the list reads' filters, every page, streamed. */
export function registerCsvExports(app: FastifyInstance, deps: OperatorDeps): void {
  const { read } = deps;

  app.get(
    '/exports/sessions.csv',
    {
      schema: {
        summary: 'Sessions as CSV (same filters as /sessions, every page)',
        tags: ['sessions'],
        querystring: query(sessionFilters),
        response: csvResponse,
      },
      config: { audit: 'export.sessions' },
    },
    async (request, reply) => {
      const filter = sessionFilter(request.query as SessionQuery);
      return sendCsv(
        reply,
        'sessions.csv',
        csvRows(
          [
            'sessionId',
            'fleetId',
            'driverId',
            'chargerId',
            'connectorId',
            'state',
            'amount',
            'pricePerKwh',
            'paidEnergyWh',
            'energyWh',
            'cost',
            'credited',
            'endReason',
            'createdAt',
            'startedAt',
            'endedAt',
          ],
          read.sessions.all(filter),
        ),
      );
    },
  );

  app.get(
    '/exports/ledger.csv',
    {
      schema: {
        summary: 'Ledger entries as CSV (same filters as /ledger, every page)',
        tags: ['money'],
        querystring: query(ledgerFilters),
        response: csvResponse,
      },
      config: { audit: 'export.ledger' },
    },
    async (request, reply) =>
      sendCsv(
        reply,
        'ledger.csv',
        csvRows(
          [
            'seq',
            'id',
            'fleetId',
            'driverId',
            'kind',
            'amount',
            'balanceAfter',
            'sessionId',
            'reference',
            'actor',
            'reason',
            'createdAt',
          ],
          read.ledger.all(request.query as LedgerFilter),
        ),
      ),
  );
}
