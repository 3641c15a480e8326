// Query strings, path parameters and headers arrive as text, so their validator coerces ("20" -> 20);
// a JSON body must already have the right types, so its validator does not (5 is not "5").
// Validators and serializers compile when their route first needs them (see lazily below).
import AjvCompiler from "@fastify/ajv-compiler";
import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";
import type { FastifyServerOptions } from "fastify";

// verbose: a failed union carries its branches, so the error handler can list the allowed values.
const ajvOptions = { removeAdditional: false, useDefaults: true, allErrors: false, verbose: true } as const;

type BuildFromPool = AjvCompiler.BuildCompilerFromPool;

/** PostgreSQL's `integer`, the narrowest column an input integer may reach. */
const INTEGER_RANGE = { minimum: -2147483648, maximum: 2147483647 } as const;

// Keywords whose values are data, not schemas; and those whose values map names to schemas.
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples", "example"]);
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

/**
 * Gives every integer of an input schema, and of the shared schemas it references, the range of
 * PostgreSQL's integer where it sets no bound of its own: `page=1e30` is then a 400 naming the
 * field, not a database error. The schemas change in place, so the OpenAPI document shows the
 * bounds too; a shared schema only used in responses is left as it is.
 */
function boundIntegers(schema: unknown, shared: Record<string, unknown>): void {
  const seen = new Set<object>();
  const stack: { node: unknown; map: boolean }[] = [{ node: schema, map: false }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { node, map } = item;
    if (node === null || typeof node !== "object" || seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const child of node) stack.push({ node: child, map: false });
      continue;
    }
    const record = node as Record<string, unknown>;
    if (map) {
      for (const child of Object.values(record)) stack.push({ node: child, map: false });
      continue;
    }
    const types = Array.isArray(record.type) ? record.type : [record.type];
    if (types.includes("integer")) {
      if (record.minimum === undefined && record.exclusiveMinimum === undefined) {
        record.minimum = INTEGER_RANGE.minimum;
      }
      if (record.maximum === undefined && record.exclusiveMaximum === undefined) {
        record.maximum = INTEGER_RANGE.maximum;
      }
    }
    if (typeof record.$ref === "string") {
      const id = record.$ref.split("#")[0];
      if (id) stack.push({ node: shared[id], map: false });
    }
    for (const [key, child] of Object.entries(record)) {
      if (!DATA_KEYWORDS.has(key)) stack.push({ node: child, map: SCHEMA_MAPS.has(key) });
    }
  }
}

// How a number is written in a query string or path: Ajv's coercion is JavaScript's Number(), which
// also takes `Infinity` (and `1e400`, which becomes it, and then passes every bound), `0x10`, `2e0`
// and padded text, so `limit=Infinity` reached the database as an error (500) and `versions/0x1`
// named version 1.
const INTEGER_TEXT = /^-?\d{1,20}$/;
const NUMBER_TEXT = /^-?(\d+(\.\d*)?|\.\d+)$/;

type NumericKind = "integer" | "number";

/** The top-level fields of a query, path or header schema that hold numbers, or lists of them. */
function numericFields(schema: unknown, shared: Record<string, unknown>): Map<string, NumericKind> {
  const fields = new Map<string, NumericKind>();
  const resolve = (node: unknown): Record<string, unknown> | null => {
    if (node === null || typeof node !== "object") return null;
    const record = node as Record<string, unknown>;
    const id = typeof record.$ref === "string" ? record.$ref.split("#")[0] : undefined;
    return id ? resolve(shared[id]) : record;
  };
  const kindOf = (node: unknown): NumericKind | null => {
    const record = resolve(node);
    if (!record) return null;
    const types = Array.isArray(record.type) ? record.type : [record.type];
    if (types.includes("integer")) return "integer";
    if (types.includes("number")) return "number";
    if (types.includes("array")) return kindOf(record.items);
    const branches = (record.anyOf ?? record.oneOf) as unknown[] | undefined;
    return branches?.map(kindOf).find((kind) => kind !== null) ?? null;
  };
  const properties = resolve(schema)?.properties;
  if (properties && typeof properties === "object") {
    for (const [name, property] of Object.entries(properties)) {
      const kind = kindOf(property);
      if (kind) fields.set(name, kind);
    }
  }
  return fields;
}

/**
 * Wraps a coercing validator: a numeric field whose text is not a plain decimal number fails its
 * type check, as text that is no number at all does (400 naming the field).
 */
function numbersAsWritten(fields: Map<string, NumericKind>, validate: Compiled): Compiled {
  if (fields.size === 0) return validate;
  const notANumber = (value: unknown, kind: NumericKind) =>
    typeof value === "string" && !(kind === "integer" ? INTEGER_TEXT : NUMBER_TEXT).test(value);
  const checked = ((data: unknown, ...rest: unknown[]) => {
    if (data !== null && typeof data === "object") {
      const record = data as Record<string, unknown>;
      for (const [name, kind] of fields) {
        const value = record[name];
        const bad = Array.isArray(value)
          ? value.some((item) => notANumber(item, kind))
          : notANumber(value, kind);
        // Text Number() cannot read: the type check then fails as for any other word.
        if (bad) record[name] = "not a number";
      }
    }
    return (validate as unknown as (...args: unknown[]) => unknown)(data, ...rest);
  }) as unknown as Compiled;
  Object.defineProperty(checked, "schemaEnv", { get: () => validate.schemaEnv });
  Object.defineProperty(checked, "errors", { get: () => validate.errors });
  return checked;
}

export function validationOptions(): Pick<FastifyServerOptions, "ajv" | "schemaController"> {
  const buildFromPool = AjvCompiler();
  const buildValidator: BuildFromPool = (externalSchemas, serverOptions) => {
    const options = serverOptions ?? {};
    // Each Ajv instance (one per encapsulated plugin and kind) is made when first used as well.
    const coercing = once(() => buildFromPool(externalSchemas, options));
    const strict = once(() =>
      buildFromPool(externalSchemas, {
        ...options,
        customOptions: { ...options.customOptions, coerceTypes: false },
      } as Parameters<BuildFromPool>[1]),
    );
    return ((route: AjvCompiler.RouteDefinition) => {
      // Every validated schema passes here before it is compiled, whichever plugin declared it; the
      // bounds are set now, so the OpenAPI document shows them before any request arrives.
      boundIntegers(route.schema, externalSchemas as Record<string, unknown>);
      if (route.httpPart === "body") return lazyValidator(() => strict()(route as never));
      return numbersAsWritten(
        numericFields(route.schema, externalSchemas as Record<string, unknown>),
        lazyValidator(() => coercing()(route as never)),
      );
    }) as unknown as ReturnType<BuildFromPool>;
  };
  const buildSerializerFromPool = SerializerSelector();
  const buildSerializer: typeof buildSerializerFromPool = (externalSchemas, serializerOptions) => {
    const build = buildSerializerFromPool(externalSchemas, serializerOptions);
    return (route) => lazily(() => build(route));
  };
  return {
    ajv: { customOptions: { ...ajvOptions, coerceTypes: "array" } },
    schemaController: { compilersFactory: { buildValidator, buildSerializer } },
  };
}

/** A body check that keeps ajv's issues of its last run, as a route's validator does. */
export type BodyCheck = ((body: unknown) => boolean) & { errors?: AjvCompiler.ErrorObject[] | null };

/**
 * A validator for a JSON body checked outside a route (an MCP tool's arguments): the routes' own
 * Ajv, options and formats, so a length counts characters and defaults are filled in alike.
 */
export const compileBodyValidator: (schema: unknown) => BodyCheck = (() => {
  const { ajv, schemaController } = validationOptions();
  const build = schemaController?.compilersFactory?.buildValidator as BuildFromPool;
  const compile = once(() => build({}, ajv as Parameters<BuildFromPool>[1]));
  return (schema) =>
    compile()({
      schema,
      method: "POST",
      url: "",
      httpPart: "body",
    } as AjvCompiler.RouteDefinition) as BodyCheck;
})();

// Compiling every route's validators and serializers at start-up costs about a second of CPU for
// several hundred schemas; each is compiled instead when its route first needs it.
type Compiled = ((...args: never[]) => unknown) & Record<string, unknown>;

function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

function lazily<F extends (...args: never[]) => unknown>(compile: () => F): F {
  const compiled = once(compile);
  return ((...args: Parameters<F>) => compiled()(...args)) as F;
}

/**
 * An Ajv validator compiled on first use. Fastify reads `schemaEnv` (to pass the parent object, so
 * coercion can replace a root value) and `errors` (after a failed call) off the function itself.
 */
function lazyValidator(compile: () => unknown): Compiled {
  const compiled = once(compile as () => Compiled);
  const validate = ((...args: never[]) => compiled()(...args)) as Compiled;
  Object.defineProperty(validate, "schemaEnv", { get: () => compiled().schemaEnv });
  Object.defineProperty(validate, "errors", { get: () => compiled().errors });
  return validate;
}
