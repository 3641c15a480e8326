// Schemas shared by every domain's routes.
import { type ObjectOptions, type Static, type TSchema, Type } from "@sinclair/typebox";

export const ErrorResponse = Type.Object(
  {
    error: Type.String({ description: "Human-readable message" }),
    code: Type.String({ description: "Machine-readable code from Vigil's closed list" }),
    details: Type.Record(Type.String(), Type.Unknown(), {
      description: "Context such as the offending field",
    }),
  },
  { $id: "ErrorResponse", description: "Error body of SRE and other non-platform routes" },
);

export const JsonError = Type.Object(
  {
    msg: Type.String(),
    errCode: Type.String(),
    extras: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
      description: "Machine-actionable context",
    }),
  },
  { $id: "JsonError", description: "Error body of platform routes (/platform/api/v1/...)" },
);

export const OrgQuery = {
  orgId: Type.Optional(
    Type.String({
      format: "uuid",
      description: "Organization that scopes the request; the caller's personal namespace when omitted",
    }),
  ),
};

export const Uuid = (description?: string) => Type.String({ format: "uuid", description });
export const DateTime = (description?: string) => Type.String({ format: "date-time", description });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * A map whose keys hold 1 to `maxKeyLength` characters. TypeBox's Record drops a key schema's
 * minLength and maxLength (any key matched), so the bound is a key pattern, and other keys are
 * refused: 400 naming the key.
 */
export const KeyedRecord = <T extends TSchema>(maxKeyLength: number, value: T, options: ObjectOptions = {}) =>
  Type.Record(Type.String({ pattern: `^[\\s\\S]{1,${maxKeyLength}}$` }), value, {
    ...options,
    additionalProperties: false,
  });

/**
 * A map in an answer whose keys are data (labels, metadata, settings): any key at all. A plain
 * Record's key pattern `^(.*)$` misses a key with a line break, and the serializer leaves such an
 * entry out of the answer without a word.
 */
export const AnyKeyRecord = <T extends TSchema>(value: T, options: ObjectOptions = {}) =>
  Type.Record(Type.String({ pattern: "^[\\s\\S]*$" }), value, options);

/** Error statuses declared on every route; routes add their own success and specific error statuses. */
export const COMMON_ERROR_STATUSES = [400, 401, 403, 404, 413, 415, 500, 503] as const;

/**
 * A reference to a schema registered with `addSchema` that keeps its static type, so a handler reads
 * `request.body` typed without a cast (TypeBox's own `Type.Ref("id")` is typed `unknown`).
 */
export const refOf = <T extends TSchema & { $id?: string }>(schema: T) =>
  Type.Unsafe<Static<T>>(Type.Ref(schema.$id ?? ""));

/** The query of a route that takes nothing but the org. */
export const OrgOnlyQuery = Type.Object(OrgQuery);
export const ERROR_RESPONSE_REF = { $ref: "ErrorResponse#" };
export const JSON_ERROR_REF = { $ref: "JsonError#" };

/**
 * The hook of a route whose JSON body may be left out (`...optionalBody` in its options): no body is
 * the same as `{}`, so the schema's defaults apply, and the API document shows the body as not
 * required. An empty body counts as none even under a JSON content type, which some clients send
 * on every request (the JSON parser, input-rules.ts).
 */
export const optionalBody = {
  async preValidation(request: { body: unknown }): Promise<void> {
    request.body ??= {};
  },
};

const rawBodies = new WeakSet<object>();

/**
 * The body of a route that reads any bytes of any content type, or none (the webhook trigger): in
 * the API document, an optional body of every type the route lists in `consumes`.
 */
export function anyRawBody(description: string) {
  const schema = Type.Unsafe<unknown>({ description });
  rawBodies.add(schema);
  return schema;
}

/** Whether a route, as `onRoute` sees it, takes its body as optional (optionalBody, anyRawBody). */
export function takesOptionalBody(route: { preValidation?: unknown; schema?: { body?: unknown } }): boolean {
  const body = route.schema?.body;
  if (typeof body === "object" && body !== null && rawBodies.has(body)) return true;
  return [route.preValidation ?? []].flat().includes(optionalBody.preValidation);
}
