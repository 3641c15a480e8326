// Query strings, path parameters and headers arrive as text, so their validator coerces ("20" -> 20);
// a JSON body must already have the right types, so its validator does not (5 is not "5").
import AjvCompiler from "@fastify/ajv-compiler";
import type { FastifyServerOptions } from "fastify";

const ajvOptions = { removeAdditional: false, useDefaults: true, allErrors: false } as const;

type BuildFromPool = AjvCompiler.BuildCompilerFromPool;

export function validationOptions(): Pick<FastifyServerOptions, "ajv" | "schemaController"> {
  const buildFromPool = AjvCompiler();
  const buildValidator: BuildFromPool = (externalSchemas, serverOptions) => {
    const options = serverOptions ?? {};
    const coercing = buildFromPool(externalSchemas, options);
    const strict = buildFromPool(externalSchemas, {
      ...options,
      customOptions: { ...options.customOptions, coerceTypes: false },
    } as Parameters<BuildFromPool>[1]);
    return ((route: AjvCompiler.RouteDefinition) =>
      (route.httpPart === "body" ? strict : coercing)(route as never)) as ReturnType<BuildFromPool>;
  };
  return {
    ajv: { customOptions: { ...ajvOptions, coerceTypes: "array" } },
    schemaController: { compilersFactory: { buildValidator } },
  };
}
