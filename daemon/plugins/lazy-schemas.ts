// Route schemas compiled on first use. Fastify compiles every route's validators (Ajv) and response
// serializers (fast-json-stringify) when the app gets ready: for this API's few hundred routes that
// was the largest part of `buildApp` + `listen` (≈ 40 % of the main thread's CPU until /health/ready,
// docs/boot.md), paid at every restart for routes a node may never serve. These compilers are
// Fastify's own (the same Ajv options, shared schemas and serializer), each route's function built
// the first time a request needs it and kept. A schema that does not compile fails that route's
// first request instead of the boot; test/lazy-schemas.test.ts compiles every route's.
import AjvCompiler from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type Compiled = ((...args: unknown[]) => unknown) & { errors?: unknown };
type Compile = (routeSchema: unknown) => Compiled;
type Builder = (externalSchemas: unknown, options: unknown) => Compile;

/** Every function handed out that has not compiled yet (for the test that compiles them all). */
export interface LazySchemas {
  compilersFactory: NonNullable<FastifyServerOptions['schemaController']>['compilersFactory'];
  /** Compiles what no request has needed yet; throws the first schema that does not compile. */
  compileAll(): void;
}

/**
 * Header names are case-insensitive and Node gives them lowercased. Fastify lowercases a header
 * schema's property names itself, but only for its own compiler: done here as it does.
 */
function lowerCaseHeaderSchema(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Object.getPrototypeOf(schema) !== Object.prototype)
    return schema;
  const { properties, required } = schema as { properties?: Record<string, unknown>; required?: unknown };
  if (!properties) return schema;
  return {
    ...schema,
    properties: Object.fromEntries(Object.entries(properties).map(([name, value]) => [name.toLowerCase(), value])),
    ...(Array.isArray(required) ? { required: required.map((name: string) => name.toLowerCase()) } : {}),
  };
}

export function createLazySchemas(): LazySchemas {
  const pending = new Set<() => void>();
  const lazily =
    (build: Builder): Builder =>
    (externalSchemas, options) => {
      const compile = build(externalSchemas, options);
      return (routeSchema) => {
        let compiled: Compiled | undefined;
        const route = routeSchema as { httpPart?: string; schema?: unknown };
        const ensure = () => {
          if (compiled) return compiled;
          pending.delete(ensure);
          compiled = compile(
            route.httpPart === 'headers' ? { ...route, schema: lowerCaseHeaderSchema(route.schema) } : routeSchema,
          );
          return compiled;
        };
        pending.add(ensure);
        const run = function (this: unknown, ...args: unknown[]) {
          return ensure().apply(this, args);
        };
        // Fastify reads a failed validation's reasons from the validator function itself.
        Object.defineProperty(run, 'errors', { get: () => compiled?.errors ?? null });
        return run;
      };
    };
  return {
    compilersFactory: {
      buildValidator: lazily(AjvCompiler() as unknown as Builder) as never,
      buildSerializer: lazily(SerializerSelector() as unknown as Builder) as never,
    },
    compileAll() {
      for (const ensure of [...pending]) ensure();
    },
  };
}
