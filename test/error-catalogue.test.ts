import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DRIVER_API_ERRORS, type CatalogueEntry } from '../src/api/error-catalogue.js';
import { OPERATOR_API_ERRORS } from '../src/api/operator-error-catalogue.js';

/**
 * Each surface's error catalogue and its page's Errors section say the same: every code a table
 * row documents is in the catalogue with that status, and every catalogue code is named there.
 */
function errorsSection(doc: string): string {
  const text = readFileSync(new URL(`../docs/${doc}`, import.meta.url), 'utf8');
  const start = text.indexOf('\n## Errors\n');
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

/**
 * `code` → status, from table rows (`| 404 | \`a\`, \`b\` | …`) and from list spans
 * (`` `404 a`, `b`: … ``: the codes after a status span, up to the first other text, share it).
 */
function documentedStatuses(section: string): Record<string, number> {
  const statuses: Record<string, number> = {};
  const rows = section.matchAll(/^\|\s*(\d{3})\s*\|([^|]*)\|/gm);
  const lists = section.matchAll(/`(\d{3}) ([a-z_]+)`((?:,\s*`[a-z_]+`)*)/g);
  for (const [, status, codes] of rows) {
    for (const [, code] of codes!.matchAll(/`([a-z_]+)`/g)) statuses[code!] = Number(status);
  }
  for (const [, status, first, more] of lists) {
    for (const code of [first!, ...[...more!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!)]) {
      statuses[code] = Number(status);
    }
  }
  return statuses;
}

describe.each([
  ['api.md', DRIVER_API_ERRORS],
  ['operator-api.md', OPERATOR_API_ERRORS],
] as const)('docs/%s and its catalogue', (doc, catalogue: Record<string, CatalogueEntry>) => {
  const section = errorsSection(doc);

  it('documents each code with the catalogue’s status', () => {
    const documented = documentedStatuses(section);
    expect(Object.keys(documented).length).toBeGreaterThan(5);
    const catalogued = Object.fromEntries(
      Object.keys(documented).map((code) => [code, catalogue[code]?.status]),
    );
    expect(catalogued).toEqual(documented);
  });

  it('names every code of the catalogue', () => {
    const named = new Set([...section.matchAll(/`(?:\d{3} )?([a-z_]+)`/g)].map((m) => m[1]));
    expect(Object.keys(catalogue).filter((code) => !named.has(code))).toEqual([]);
  });
});
