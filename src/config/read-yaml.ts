import { createRequire } from 'node:module';
import type { JsYaml, LoadState } from './js-yaml-api.js';

const require = createRequire(import.meta.url);
const { load, Schema, Type } = require('js-yaml') as JsYaml;

/**
 * The config file's YAML, read as `yaml`'s `parse` reads it (YAML 1.2, core schema), in a tenth of
 * its time: `yaml` spent about 150 ms of the gateway's start-up on a 500-charger config.
 *
 * js-yaml reads the plain subset every config is written in, with the core schema's scalars
 * resolved by `yaml`'s own tests and constructors (its regular expressions, `parseInt`,
 * `parseFloat`). Where the two libraries may part (a directive, a tag, an anchor or alias, an
 * explicit `?` key, a null or collection key, a duplicate key, any syntax error) the text goes to
 * `yaml` itself, so such a file reads, warns and fails exactly as before, only slower.
 * test/config-yaml.test.ts holds the two to the same result.
 */
export function readYaml(text: string): unknown {
  const fast = readPlainYaml(text);
  return fast ? fast.value : slowParse(text);
}

/** The file's value read by js-yaml, or undefined where `yaml` must read it. */
export function readPlainYaml(text: string): { value: unknown } | undefined {
  // A carriage return outside a CRLF: the two break lines apart differently.
  if (/\r(?!\n)/.test(text) || text.split('\n').some(mayPart)) return undefined;
  const flags = { parted: false };
  // The line each open node began on (a node opens on the line its key or indicator ends).
  const opened: number[] = [];
  let value: unknown;
  try {
    value = load(text, {
      schema: CORE_SCHEMA,
      listener(event, state) {
        if (event === 'open') opened.push(state.line);
        else if (parts(state, opened.pop())) flags.parted = true;
      },
    });
  } catch {
    return undefined;
  }
  if (flags.parted || hasNullKey(value)) return undefined;
  // An empty document: js-yaml says undefined, `yaml` null.
  return { value: value === undefined ? null : value };
}

/**
 * Where the fuzzing in the test found or could find the two apart, left to `yaml`: a directive
 * (`%YAML 1.1` changes the schema), a document marker with more on its line, a tag, an explicit
 * key, a block scalar (`|`, `>`: they part on indentation), a comment glued to a flow indicator, a
 * comma or a quote (`yaml` refuses it).
 */
const MAY_PART = /^%|^(?:---|\.\.\.)(?![ \r]*$)|(?:^|[\s,[{])[!?|>]|[\]}"'[{,]#/;

/**
 * Whether a line holds something that may part the two parsers. Comments are left out (the
 * example config's would send it to `yaml`): a whole-line one, and one on a line without quotes.
 * What follows the `#` there is a comment or the inside of a string over several lines (a
 * multi-line scalar goes to `yaml` anyway), neither of which parts them.
 */
function mayPart(line: string): boolean {
  // An implicit key over 1024 characters, a tab or a byte-order mark, even in a comment: `yaml`
  // refuses or reads them otherwise.
  if (line.length > 1024 || /[\t\ufeff]/.test(line)) return true;
  const comment = /^\s*#/.test(line)
    ? 0
    : line.includes('"') || line.includes("'")
      ? -1
      : line.search(/(?:^|[ \t])#/);
  return MAY_PART.test(comment === -1 ? line : line.slice(0, comment));
}

/**
 * The core schema's tags under names of our own: an explicit `!!int` (or any tag) is then unknown
 * to js-yaml and the text goes to `yaml`, which resolves tags its own way.
 */
function scalar(name: string, test: RegExp, construct: (text: string) => unknown): object {
  return new Type(`tag:fleet-gateway.config,2026:${name}`, {
    kind: 'scalar',
    resolve: (text: string) => test.test(text),
    construct,
  });
}

// Order and tests of yaml/dist/schema/core/schema.js (null, bool, int, float).
const CORE_SCHEMA = new Schema({
  implicit: [
    scalar('null', /^(?:~|[Nn]ull|NULL)?$/, () => null),
    scalar('bool', /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (s) => s[0] === 't' || s[0] === 'T'),
    scalar('int-oct', /^0o[0-7]+$/, (s) => parseInt(s.substring(2), 8)),
    scalar('int', /^[-+]?[0-9]+$/, (s) => parseInt(s, 10)),
    scalar('int-hex', /^0x[0-9a-fA-F]+$/, (s) => parseInt(s.substring(2), 16)),
    scalar('float-nan', /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/, (s) =>
      s.slice(-3).toLowerCase() === 'nan'
        ? NaN
        : s[0] === '-'
          ? Number.NEGATIVE_INFINITY
          : Number.POSITIVE_INFINITY,
    ),
    scalar('float-exp', /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, parseFloat),
    scalar('float', /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, parseFloat),
  ],
});

/**
 * A node whose reading may differ: an anchor (and so any alias), the non-specific `!` tag, a
 * scalar over more than one line (`yaml` is stricter on a quoted one's indentation), or a flow
 * collection used as a key (js-yaml names it `a,b`, `yaml` `[ a, b ]`).
 */
function parts(state: LoadState, openedOn: number | undefined): boolean {
  if (state.anchor !== null || state.tag === '!') return true;
  if (state.kind === 'scalar') return state.line !== openedOn;
  if (state.kind !== 'mapping' && state.kind !== 'sequence') return false;
  let at = state.position;
  while (state.input[at] === ' ' || state.input[at] === '\t') at++;
  return state.input[at] === ':';
}

/**
 * Whether a mapping has the key `null`: js-yaml spells a null or empty key so (`~:`, `: x`),
 * `yaml` as the empty string. A quoted "null" key is sent to `yaml` too, which reads it the same.
 */
function hasNullKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasNullKey);
  for (const [key, item] of Object.entries(value)) {
    if (key === 'null' || hasNullKey(item)) return true;
  }
  return false;
}

/** `yaml` is loaded only for a file that needs it (its import is 10 ms of start-up). */
function slowParse(text: string): unknown {
  const { parse } = require('yaml') as typeof import('yaml');
  return parse(text);
}
