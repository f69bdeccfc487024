import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { errorResponses } from './schemas.js';

/**
 * Text a spreadsheet would run as a formula (OWASP CSV injection): it gets a leading `'`, which
 * the spreadsheet shows as text, and is quoted. Numbers are written as numbers, negatives too.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** RFC 4180: fields with a comma, quote, CR or LF are quoted, quotes doubled; lines end in CRLF. */
function field(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  const text = typeof value === 'string' ? value : String(value);
  if (FORMULA_START.test(text)) return `"'${text.replaceAll('"', '""')}"`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(values: readonly unknown[]): string {
  return `${values.map(field).join(',')}\r\n`;
}

/** A header line, then one line per row, page by page (each page is one short read). */
export function* csvRows<T extends object>(
  columns: readonly (keyof T & string)[],
  pages: Iterable<T[]>,
): Generator<string> {
  yield csvLine(columns);
  for (const page of pages) {
    yield page.map((row) => csvLine(columns.map((c) => row[c]))).join('');
  }
}

/** The answer schema of a CSV export. */
export const csvResponse = {
  200: {
    description: 'RFC 4180 CSV with a header line, streamed',
    content: { 'text/csv': { schema: { type: 'string' } } },
  },
  ...errorResponses,
};

/** Streams `lines` as an attachment named `name`. */
export function sendCsv(reply: FastifyReply, name: string, lines: Iterable<string>): FastifyReply {
  return reply
    .type('text/csv; charset=utf-8; header=present')
    .header('content-disposition', `attachment; filename="${name}"`)
    .send(Readable.from(lines));
}
