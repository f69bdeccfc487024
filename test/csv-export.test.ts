import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvLine } from '../src/operator/csv.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { createOperator, op } from './helpers/operator.js';

/** RFC 4180 cells of one CRLF-terminated line, as a spreadsheet's import reads them. */
function cells(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    let cell = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (line[i] === '"' && line[i + 1] === '"') {
          cell += '"';
          i += 2;
        } else if (line[i] === '"') break;
        else cell += line[i++];
      }
      i++;
    } else {
      while (line[i] !== ',' && line[i] !== '\r') cell += line[i++];
    }
    out.push(cell);
    if (line[i] === '\r') return out;
    i++;
  }
}

const FORMULA = /^[=+\-@\t\r]/;

describe('CSV cells a spreadsheet would run', () => {
  it('no text cell starts a formula; text reads back behind one quote; numbers stay numbers', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.constantFrom('=1+1', '-2', '+x', '@SUM(A1)', '\tx')), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        (texts, n) => {
          const read = cells(csvLine([...texts, n]));
          expect(read).toHaveLength(texts.length + 1);
          texts.forEach((text, k) => {
            const cell = read[k] as string;
            expect(FORMULA.test(cell)).toBe(false);
            expect(FORMULA.test(text) ? cell === `'${text}` : cell === text).toBe(true);
          });
          expect(read.at(-1)).toBe(String(n));
        },
      ),
    );
  });
});

describe('exports', () => {
  let t: TestGateway;
  let operator: string;
  beforeAll(async () => {
    t = await startTestGateway();
    operator = createOperator(t.gw.db, 'otto', 'operator');
  });
  afterAll(async () => t.close());

  it('the ledger export neutralises a formula in a reason and a driver id, and keeps a debit negative', async () => {
    const driverId = '@drv-formula';
    expect(
      (
        await op(t.gw.operatorUrl, operator, 'PUT', `/drivers/${driverId}`, {
          fleetId: 'fleet-a',
          email: 'formula@fleet.test',
        })
      ).status,
    ).toBe(200);
    const formula = '=HYPERLINK("http://evil.test","refund")';
    const move = (path: string, amount: number, reason: string) =>
      op(
        t.gw.operatorUrl,
        operator,
        'POST',
        path,
        { amount, reason },
        {
          'idempotency-key': randomUUID(),
        },
      );
    expect((await move(`/drivers/${driverId}/top-ups`, 700, formula)).status).toBe(200);
    expect((await move(`/drivers/${driverId}/adjustments`, -500, '-1 for the towel')).status).toBe(
      200,
    );
    const res = await fetch(
      `${t.gw.operatorUrl}/admin/v1/exports/ledger.csv?driverId=${encodeURIComponent(driverId)}`,
      { headers: { authorization: `Bearer ${operator}` } },
    );
    expect(res.status).toBe(200);
    const lines = (await res.text()).split('\r\n').slice(0, -1);
    const [header, ...rows] = lines.map((l) => cells(`${l}\r`));
    const col = (row: string[] | undefined, name: string) => row?.[header!.indexOf(name)];
    const byKind = (kind: string) => rows.find((r) => col(r, 'kind') === kind);
    const topUp = byKind('top_up');
    const adjustment = byKind('adjustment');
    expect(col(topUp, 'reason')).toBe(`'${formula}`);
    expect(col(topUp, 'driverId')).toBe(`'${driverId}`);
    expect(col(topUp, 'amount')).toBe('700');
    expect(col(adjustment, 'reason')).toBe("'-1 for the towel");
    expect(col(adjustment, 'amount')).toBe('-500');
    for (const row of rows)
      for (const cell of row) expect(FORMULA.test(cell) && !/^-\d+$/.test(cell)).toBe(false);
  });
});
