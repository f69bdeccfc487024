import { createRequire } from 'node:module';
import type { FastifyServerOptions } from 'fastify';

type AjvOptions = NonNullable<FastifyServerOptions['ajv']>;
type Ajv = Parameters<NonNullable<AjvOptions['onCreate']>>[0];
type Validate = ReturnType<Ajv['compile']>;
type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']
>;
type BuildSerializer = NonNullable<CompilersFactory['buildSerializer']>;

/*
 * fastify compiles every route's schemas, request validators and response serializers, before it
 * listens: on the driver and operator APIs about 150 ms of CPU, half the gateway's own start-up
 * work (npm run bench -- --only startup, and its profile), for routes most runs never call. Both
 * are compiled here on a route's first use instead, by the same compiler from the same schema, so
 * each accepts, rejects and writes exactly what it did.
 */

/**
 * Every validator and serializer not compiled yet, so that a test can compile all of them and a
 * schema that does not compile fails in CI, not at its route's first request in the field.
 */
const pending = new Set<() => unknown>();

/** Compiles every deferred validator and serializer now; throws the first compile error. */
export function compileDeferred(): number {
  let compiled = 0;
  for (const compile of [...pending]) {
    compile();
    compiled++;
  }
  return compiled;
}

/** The properties fastify and ajv read on a validator besides calling it. */
const VALIDATOR_PROPERTIES = ['errors', 'schema', 'schemaEnv', 'evaluated', 'source'] as const;

/**
 * fastify's `ajv.onCreate`: this ajv instance's compile returns a validator that compiles on its
 * first call (or first property read), then hands every call and read to ajv's own.
 */
export function compileOnFirstUse(ajv: Ajv): void {
  const compile = ajv.compile.bind(ajv);
  ajv.compile = ((schema: Parameters<Ajv['compile']>[0]) =>
    deferredValidator(() => compile(schema))) as Ajv['compile'];
}

function deferredValidator(compile: () => Validate): Validate {
  let compiled: Validate | undefined;
  const real = (): Validate => {
    if (compiled === undefined) {
      compiled = compile();
      pending.delete(real);
    }
    return compiled;
  };
  pending.add(real);
  const validate = function (this: unknown, ...args: Parameters<Validate>) {
    return real().apply(this, args);
  };
  for (const key of VALIDATOR_PROPERTIES) {
    Object.defineProperty(validate, key, { get: () => real()[key], enumerable: true });
  }
  return validate as Validate;
}

/**
 * fastify's `compilersFactory.buildSerializer`: its default, fast-json-stringify's compiler (the
 * one fastify itself would load, resolved from fastify's folder), loaded when the first
 * serializer is built and each serializer built on its route's first answer.
 */
export function serializersOnFirstUse(): BuildSerializer {
  return (externalSchemas, options) => {
    let compile: ReturnType<BuildSerializer> | undefined;
    return (route) => {
      let serialize: ((data: unknown) => string) | undefined;
      const real = (): ((data: unknown) => string) => {
        if (serialize === undefined) {
          serialize = (compile ??= defaultSerializers()(externalSchemas, options))(route);
          pending.delete(real);
        }
        return serialize;
      };
      pending.add(real);
      return (data: unknown) => real()(data);
    };
  };
}

function defaultSerializers(): BuildSerializer {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
  const { SerializerSelector } = fromFastify('@fastify/fast-json-stringify-compiler') as {
    SerializerSelector: () => BuildSerializer;
  };
  return SerializerSelector();
}
