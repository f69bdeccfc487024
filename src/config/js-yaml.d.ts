// js-yaml 4 ships no types (@types/js-yaml is a separate package): the part read-yaml.ts uses.
declare module 'js-yaml' {
  export interface TypeOptions {
    kind: 'scalar' | 'sequence' | 'mapping';
    resolve?: (data: string) => boolean;
    construct?: (data: string) => unknown;
  }
  export class Type {
    constructor(tag: string, options: TypeOptions);
  }
  export class Schema {
    constructor(definition: { implicit?: Type[]; explicit?: Type[] });
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
  export interface LoadOptions {
    schema?: Schema;
    listener?: (event: 'open' | 'close', state: LoadState) => void;
  }
  export function load(text: string, options?: LoadOptions): unknown;
}
