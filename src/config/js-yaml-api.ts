/*
 * js-yaml 4 ships no types (@types/js-yaml is a separate package): the part read-yaml.ts uses,
 * which loads it through require with these.
 */

export interface TypeOptions {
  kind: 'scalar' | 'sequence' | 'mapping';
  resolve?: (data: string) => boolean;
  construct?: (data: string) => unknown;
}

/** The loader's state as a listener sees it when a node opens or closes. */
export interface LoadState {
  readonly input: string;
  readonly position: number;
  readonly line: number;
  readonly tag: string | null;
  readonly anchor: string | null;
  readonly kind: 'scalar' | 'sequence' | 'mapping' | null;
  readonly result: unknown;
}

export interface JsYaml {
  Type: new (tag: string, options: TypeOptions) => object;
  Schema: new (definition: { implicit?: object[]; explicit?: object[] }) => object;
  load(
    text: string,
    options?: { schema?: object; listener?: (event: 'open' | 'close', state: LoadState) => void },
  ): unknown;
}
