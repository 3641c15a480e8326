// The API walk: every operation of the generated OpenAPI document, a valid-ish request for each
// (real rows in its path, a body sampled from its schema or given below), and one change at a time
// to one part of it: a path or query parameter, a body field or key, the body's text, its content
// type. The changes are fast-check arbitraries, so a failure shrinks to a small request.
import fc from "fast-check";
import type { FuzzRequest } from "./client.ts";
import { objectsOf, pathOf, renameKey, type Slot, setAt, slotsOf } from "./doc.ts";
import {
  contentTypeArb,
  Deep,
  type Evil,
  encodeParam,
  evilKey,
  evilValue,
  Long,
  mutateText,
  Raw,
  type TextOp,
  textOp,
  toJsonText,
  toParamText,
} from "./evil.ts";
import type { Resources } from "./resources.ts";

type Schema = Record<string, unknown>;
type Method = FuzzRequest["method"];

export interface Param {
  name: string;
  in: "path" | "query";
  schema: Schema;
}

export interface Operation {
  id: string;
  method: Method;
  /** The OpenAPI path, `{name}` placeholders included. */
  path: string;
  tag: string;
  params: Param[];
  body: Schema | null;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { operationId?: string; tags?: string[]; parameters?: unknown[]; requestBody?: unknown }>
  >;
  components?: { schemas?: Record<string, Schema> };
}

/** Operations the walk leaves to others: the trigger is the deliveries' area; probes take no input. */
const NOT_WALKED = new Set(["triggerWebhook", "getHealth", "getReadiness"]);

export function operationsOf(doc: OpenApiDocument): { operations: Operation[]; skipped: string[] } {
  const operations: Operation[] = [];
  const skipped: string[] = [];
  for (const [path, byMethod] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(byMethod)) {
      const id = op.operationId ?? `${method} ${path}`;
      if (NOT_WALKED.has(id)) {
        skipped.push(id);
        continue;
      }
      const params = ((op.parameters ?? []) as { name: string; in: string; schema: Schema }[])
        .filter((param) => param.in === "path" || param.in === "query")
        .map((param) => ({ name: param.name, in: param.in as "path" | "query", schema: param.schema }));
      const content = (op.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)
        ?.content;
      operations.push({
        id,
        method: method.toUpperCase() as Method,
        path,
        tag: op.tags?.[0] ?? "other",
        params,
        body: content?.["application/json"]?.schema ?? null,
      });
    }
  }
  return { operations, skipped };
}

// ---- schemas ----

export class SchemaBook {
  constructor(private readonly doc: OpenApiDocument) {}

  resolve(schema: Schema | undefined): Schema {
    let current = schema ?? {};
    for (let hops = 0; typeof current.$ref === "string" && hops < 10; hops++) {
      const name = (current.$ref as string).replace("#/components/schemas/", "");
      current = this.doc.components?.schemas?.[name] ?? {};
    }
    return current;
  }

  /** The branch of a union that is not null (the first one), or the schema itself. */
  private main(schema: Schema): Schema {
    const resolved = this.resolve(schema);
    const branches = (resolved.anyOf ?? resolved.oneOf) as Schema[] | undefined;
    if (!branches) return resolved;
    const branch = branches.map((item) => this.resolve(item)).find((item) => item.type !== "null");
    return branch ?? resolved;
  }

  /** The schema of the value at a path below `schema`, when the schema says. */
  at(schema: Schema, path: (string | number)[]): Schema | null {
    let current: Schema | null = this.main(schema);
    for (const key of path) {
      if (!current) return null;
      if (current.type === "array") current = current.items ? this.main(current.items as Schema) : null;
      else {
        const properties = current.properties as Record<string, Schema> | undefined;
        const declared = properties?.[String(key)];
        const extra: unknown = current.additionalProperties;
        current = declared
          ? this.main(declared)
          : extra && typeof extra === "object"
            ? this.main(extra as Schema)
            : null;
      }
    }
    return current;
  }

  /** A valid value for the schema, as fast-check arbitrary: small, within bounds and patterns. */
  arbitrary(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
    const resolved = this.resolve(schema);
    if ("const" in resolved) return fc.constant(resolved.const);
    if (Array.isArray(resolved.enum)) return fc.constantFrom(...(resolved.enum as unknown[]));
    const branches = (resolved.anyOf ?? resolved.oneOf) as Schema[] | undefined;
    if (branches) return fc.oneof(...branches.map((branch) => this.arbitrary(branch, depth)));
    switch (resolved.type) {
      case "null":
        return fc.constant(null);
      case "boolean":
        return fc.boolean();
      case "integer":
        return fc.integer({
          min: Math.max(Number(resolved.minimum ?? -1000), -(2 ** 31)),
          max: Math.min(Number(resolved.maximum ?? 1000), 2 ** 31 - 1),
        });
      case "number":
        return fc.double({ noNaN: true, noDefaultInfinity: true });
      case "string":
        return this.stringArbitrary(resolved);
      case "array": {
        const maxLength = Math.min(Number(resolved.maxItems ?? 3), 3);
        const minLength = Math.min(Number(resolved.minItems ?? 0), maxLength);
        if (depth > 3) return fc.constant([]);
        const items = this.arbitrary((resolved.items as Schema) ?? {}, depth + 1);
        return resolved.uniqueItems
          ? fc.uniqueArray(items, { minLength, maxLength, selector: (item) => JSON.stringify(item) })
          : fc.array(items, { minLength, maxLength });
      }
      case "object": {
        if (depth > 3) return fc.constant({});
        const properties = (resolved.properties ?? {}) as Record<string, Schema>;
        const required = (resolved.required ?? []) as string[];
        const shape: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [key, child] of Object.entries(properties)) {
          if (this.resolve(child).readOnly) continue;
          shape[key] = this.arbitrary(child, depth + 1);
        }
        const extra = resolved.additionalProperties;
        const record = fc.record(shape, { requiredKeys: required.filter((key) => key in shape) });
        if (extra && typeof extra === "object" && Object.keys(shape).length === 0) {
          return fc.dictionary(
            fc.string({ minLength: 1, maxLength: 12 }),
            this.arbitrary(extra as Schema, depth + 1),
            {
              maxKeys: 3,
            },
          );
        }
        return record;
      }
      default:
        return fc.jsonValue({ maxDepth: 1 });
    }
  }

  private stringArbitrary(schema: Schema): fc.Arbitrary<string> {
    const maxLength = Math.min(Number(schema.maxLength ?? 40), 40);
    const minLength = Math.min(Number(schema.minLength ?? 0), maxLength);
    if (schema.format === "uuid") return fc.uuid();
    if (schema.format === "date-time") {
      return fc
        .date({
          min: new Date("2000-01-01T00:00:00Z"),
          max: new Date("2100-01-01T00:00:00Z"),
          noInvalidDate: true,
        })
        .map((date) => date.toISOString());
    }
    if (schema.format === "uri") return fc.constantFrom("http://127.0.0.1:9/", "https://127.0.0.1/x?y=1");
    if (typeof schema.pattern === "string") {
      const pattern = new RegExp(schema.pattern as string);
      return fc
        .stringMatching(pattern)
        .filter(
          (text) =>
            text.length >= minLength && text.length <= Number(schema.maxLength ?? Number.POSITIVE_INFINITY),
        );
    }
    return fc.string({ minLength, maxLength, unit: "grapheme" });
  }
}

// ---- the valid-ish request of each operation ----

export interface Baseline {
  path: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
}

let fresh = 0;
const unique = (prefix: string) => `${prefix}-${(++fresh).toString(36)}`;

const STAGES = [{ id: "only", action_type: "json_transform", config: { expression: "1" } }];

/**
 * Given values for the operations that need real rows or a body the schema alone does not make
 * valid; the rest of a body comes from its schema's required fields.
 */
async function given(op: Operation, r: Resources): Promise<Partial<Baseline>> {
  switch (op.id) {
    case "createApiKey":
      return { body: { name: unique("fz-key"), scopes: ["sre_alerts_read"] } };
    case "revokeApiKey":
      return { path: { id: await r.victim("key") } };
    case "createOrg":
      return { body: { name: unique("fz-org") } };
    case "createIntegration":
      return { body: { name: unique("fz-int"), type: "grafana", url: null } };
    case "getIntegration":
    case "syncIntegrationAlerts":
    case "listAlertSyncRuns":
      return { path: { name: r.integration } };
    case "updateIntegration":
      return {
        path: { name: r.integration },
        body: { name: r.integration, type: "alertmanager", url: "http://127.0.0.1:9/" },
      };
    case "deleteIntegration":
      return { path: { name: await r.victim("integration") } };
    case "createWebhook":
      return { body: { name: unique("fz-hook"), target_type: "agent", target_name: r.agent } };
    case "getWebhook":
    case "rotateWebhookToken":
      return { path: { webhook_id: r.hookId } };
    case "updateWebhook":
      return { path: { webhook_id: r.hookId }, body: { description: "fuzzed" } };
    case "deleteWebhook":
      return { path: { webhook_id: await r.victim("webhook") } };
    case "listWebhookRuns":
      return { path: { webhook_id: r.runHookId } };
    case "getWebhookRun":
      return { path: { webhook_id: r.runHookId, run_id: r.invocationId } };
    case "createAlertWebhook":
      return { path: { app_name: "sre" }, body: { source: "grafana", integration: unique("fz") } };
    case "listAlertWebhooks":
      return { path: { app_name: "sre" } };
    case "getAlertWebhookBySource":
      return { path: { app_name: "sre", source: "grafana" } };
    // deleteApp keeps a sampled (unknown) app name: uninstalling would refuse the shared deliveries.
    case "getApp":
    case "rotateAppToken":
      return { path: { appName: "sre" } };
    case "putApp":
      return { path: { appName: "sre" }, body: { config: { fuzz: "yes" } } };
    case "getAlertWebhook":
    case "rotateAlertWebhookToken":
      return { path: { app_name: "sre", id: r.registrationId } };
    case "updateAlertWebhook":
      return { path: { app_name: "sre", id: r.registrationId }, body: { classify_mode: "batch" } };
    case "deleteAlertWebhook":
      return { path: { app_name: "sre", id: await r.victim("registration") } };
    case "updateAlert":
      return { path: { id: r.alertId }, body: { attention: "needs_review" } };
    case "getAlertV1":
    case "reclassifyAlert":
    case "getAlertHistory":
    case "investigateAlert":
      return { path: { id: r.alertId } };
    case "getInvestigation":
    case "submitInvestigationEvidence":
      return { path: { id: r.investigationId } };
    case "updateInvestigationStatus":
      return { path: { id: r.investigationId }, body: { status: "running" } };
    case "registerAgent":
      return { body: { name: unique("fz-agent"), kind: "builtin", integrations: [r.integration] } };
    case "getAgent":
      return { path: { name: r.agent } };
    case "updateAgent":
      return {
        path: { name: r.agent },
        body: { name: r.agent, kind: "builtin", integrations: [r.integration] },
      };
    case "deleteAgent":
      return { path: { name: await r.victim("agent") } };
    case "createWorkflow":
      return { body: { name: unique("fz-flow"), stages: STAGES } };
    case "getWorkflow":
    case "createWorkflowVersion":
      return { path: { name: r.workflow } };
    case "updateWorkflow":
      return { path: { name: r.workflow }, body: { description: "fuzzed" } };
    case "deleteWorkflow":
      return { path: { name: await r.victim("workflow") } };
    case "updateWorkflowVersion":
      return { path: { name: r.workflow, version: String(r.draftVersion) }, body: { stages: STAGES } };
    case "approveWorkflowVersion":
      return { path: { name: r.workflow, version: String(r.draftVersion) } };
    case "getExecutionTrace":
      return { path: { traceId: r.traceId } };
    case "terminateSession":
      return { path: { session_id: r.sessionId }, query: { reason: "fuzz" } };
    case "listSessionArtifacts":
    case "getSessionByID":
      return { path: { session_id: r.sessionId } };
    case "exportSession":
      return { path: { session_id: r.sessionId }, query: { parts: "notes,report" } };
    case "downloadSessionArtifact":
      return { path: { session_id: r.sessionId, artifact_id: "report.md" } };
    default:
      return {};
  }
}

/** The required fields of an object schema, each with the first valid value the schema gives. */
function sampleRequired(book: SchemaBook, schema: Schema | null): unknown {
  if (!schema) return undefined;
  return fc.sample(book.arbitrary(schema), { seed: 1, numRuns: 1 })[0];
}

export async function baselineOf(op: Operation, book: SchemaBook, r: Resources): Promise<Baseline> {
  const known = await given(op, r);
  const path: Record<string, string> = { ...known.path };
  for (const param of op.params) {
    if (param.in === "path" && path[param.name] === undefined) {
      path[param.name] = String(fc.sample(book.arbitrary(param.schema), { seed: 1, numRuns: 1 })[0]);
    }
  }
  return {
    path,
    query: { ...known.query },
    body: known.body !== undefined ? structuredClone(known.body) : sampleRequired(book, op.body),
  };
}

// ---- one change to one part ----

/** A part of the request a mutation lands on: a parameter, or a place in the body. */
export type Part =
  | { in: "path" | "query"; name: string; schema: Schema }
  | { in: "body"; path: (string | number)[]; schema: Schema | null };

export type ApiMutation =
  | { kind: "none" }
  | { kind: "valid"; part: number; value: unknown }
  | { kind: "value"; part: number; value: Evil }
  | { kind: "raw"; part: number; text: string }
  | { kind: "drop"; part: number }
  | { kind: "add-key"; target: number; key: string; value: Evil }
  | { kind: "rename-key"; target: number; key: string }
  | { kind: "body-text"; op: TextOp }
  | { kind: "content-type"; value: string | null }
  | { kind: "whole-body"; value: Evil };

/** Percent-encodings a browser would never send: NUL, invalid UTF-8, an encoded surrogate, broken escapes. */
const RAW_ENCODED = [
  "%00",
  "%ff",
  "%c0%80",
  "%ed%a0%80",
  "%",
  "%zz",
  "%2e%2e",
  "a%2fb",
  "%u0000",
  "%25",
  "+",
  "%20",
];

/** The parts of an operation: its parameters, and every place of its baseline body and schema. */
export function partsOf(op: Operation, book: SchemaBook, baseline: Baseline): Part[] {
  const parts: Part[] = op.params.map((param) => ({ in: param.in, name: param.name, schema: param.schema }));
  if (op.body) {
    const seen = new Set<string>();
    const add = (path: (string | number)[]) => {
      const key = JSON.stringify(path);
      if (seen.has(key)) return;
      seen.add(key);
      parts.push({ in: "body", path, schema: book.at(op.body as Schema, path) });
    };
    // Fields the schema declares, at the top level and one level down.
    const top = book.at(op.body, []);
    for (const name of Object.keys((top?.properties ?? {}) as object)) {
      add([name]);
      const child = book.at(op.body, [name]);
      const nested = child?.type === "array" ? book.at(op.body, [name, 0]) : child;
      for (const inner of Object.keys((nested?.properties ?? {}) as object)) {
        add(child?.type === "array" ? [name, 0, inner] : [name, inner]);
      }
    }
    for (const slot of slotsOf(baseline.body)) add(slotPath(baseline.body, slot));
  }
  return parts;
}

function slotPath(doc: unknown, slot: Slot): (string | number)[] {
  return pathOf(doc, slot)
    .split(".")
    .map((key) => (/^\d+$/.test(key) ? Number(key) : key));
}

export function mutationArb(parts: Part[], book: SchemaBook, op: Operation): fc.Arbitrary<ApiMutation> {
  const last = Math.max(parts.length - 1, 0);
  const urlParts = parts.map((part, index) => ({ part, index })).filter(({ part }) => part.in !== "body");
  const choices: fc.WeightedArbitrary<ApiMutation>[] = [
    { arbitrary: fc.constant({ kind: "none" as const }), weight: 1 },
    { arbitrary: contentTypeArb.map((value) => ({ kind: "content-type" as const, value })), weight: 2 },
    {
      arbitrary: textOp.map((mutation) => ({ kind: "body-text" as const, op: mutation })),
      weight: op.body ? 3 : 1,
    },
    {
      arbitrary: evilValue.map((value) => ({ kind: "whole-body" as const, value })),
      weight: op.body ? 2 : 1,
    },
    {
      arbitrary: fc
        .record({ target: fc.nat(20), key: evilKey, value: evilValue })
        .map((m) => ({ kind: "add-key" as const, ...m })),
      weight: 3,
    },
  ];
  if (parts.length > 0) {
    choices.push(
      {
        arbitrary: fc
          .record({ part: fc.nat(last), value: evilValue })
          .map((m) => ({ kind: "value" as const, ...m })),
        weight: 10,
      },
      { arbitrary: fc.nat(last).map((part) => ({ kind: "drop" as const, part })), weight: 2 },
    );
    const valid = parts
      .map((part, index) => ({ part, index }))
      .filter(({ part }) => part.schema)
      .map(({ part, index }) =>
        book
          .arbitrary(part.schema as Schema)
          .map((value) => ({ kind: "valid" as const, part: index, value })),
      );
    if (valid.length > 0) choices.push({ arbitrary: fc.oneof(...valid), weight: 4 });
  }
  if (urlParts.length > 0) {
    choices.push({
      arbitrary: fc
        .record({ which: fc.nat(urlParts.length - 1), text: fc.constantFrom(...RAW_ENCODED) })
        .map(({ which, text }) => ({
          kind: "raw" as const,
          part: (urlParts[which] as { index: number }).index,
          text,
        })),
      weight: 3,
    });
  }
  if (op.body) {
    choices.push({
      arbitrary: fc
        .record({ target: fc.nat(20), key: evilKey })
        .map((m) => ({ kind: "rename-key" as const, ...m })),
      weight: 1,
    });
  }
  return fc.oneof(...choices);
}

/** A short name of a mutation, for counts and reports. */
export function mutationLabel(parts: Part[], mutation: ApiMutation): string {
  const partName = (index: number) => {
    const part = parts[index];
    if (!part) return "?";
    return part.in === "body" ? `body.${part.path.join(".") || "(root)"}` : `${part.in}.${part.name}`;
  };
  switch (mutation.kind) {
    case "none":
      return "none";
    case "valid":
    case "value":
    case "raw":
    case "drop":
      return `${mutation.kind} ${partName(mutation.part)}`;
    case "add-key":
    case "rename-key":
      return `${mutation.kind} ${JSON.stringify(mutation.key).slice(0, 40)}`;
    case "body-text":
      return `body-text ${mutation.op.op}`;
    case "content-type":
      return `content-type ${JSON.stringify(mutation.value)}`;
    case "whole-body":
      return "whole-body";
  }
}

const isMarker = (value: object) => value instanceof Raw || value instanceof Long || value instanceof Deep;

function setPath(root: { value: unknown }, path: (string | number)[], value: unknown, drop: boolean): void {
  let container: unknown = root;
  const keys: (string | number)[] = ["value", ...path];
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i] as string | number;
    let next = (container as Record<string | number, unknown>)[key];
    if (next === null || typeof next !== "object") {
      next = typeof keys[i + 1] === "number" ? [] : {};
      setAt({ parent: container as Record<string, unknown>, key }, next);
    }
    container = next;
  }
  const lastKey = keys[keys.length - 1] as string | number;
  if (drop) {
    if (Array.isArray(container)) container.splice(Number(lastKey), 1);
    else delete (container as Record<string, unknown>)[lastKey];
  } else setAt({ parent: container as Record<string, unknown>, key: lastKey }, value);
}

/** The request: the baseline with the one change made. */
export function buildRequest(
  op: Operation,
  parts: Part[],
  baseline: Baseline,
  mutation: ApiMutation,
  auth: Record<string, string>,
): FuzzRequest {
  const pathText: Record<string, string> = {};
  for (const [name, value] of Object.entries(baseline.path)) pathText[name] = encodeParam(value);
  const query: [string, string][] = Object.entries(baseline.query).map(([name, value]) => [
    encodeParam(name),
    encodeParam(value),
  ]);
  const root = { value: structuredClone(baseline.body) as unknown };
  let bodyText: Buffer | undefined;
  let contentType: string | null = "application/json";
  let sendBody = op.body !== null;

  const urlValue = (part: Part, value: Evil | unknown, encoded: boolean) => {
    if (part.in === "body") return;
    const texts: string[] = [];
    if (Array.isArray(value)) for (const item of value) texts.push(toParamText(item as Evil));
    else if (
      part.in === "query" &&
      value !== null &&
      typeof value === "object" &&
      !encoded &&
      !isMarker(value)
    ) {
      for (const [key, item] of Object.entries(value)) {
        query.push([
          `${encodeParam(part.name)}[${encodeParam(key)}]`,
          encodeParam(toParamText(item as Evil)),
        ]);
      }
      return;
    } else texts.push(encoded ? String(value) : toParamText(value as Evil));
    if (part.in === "path") {
      pathText[part.name] = texts.map((text) => (encoded ? text : encodeParam(text))).join(",");
    } else {
      for (let i = query.length - 1; i >= 0; i--)
        if (query[i]?.[0] === encodeParam(part.name)) query.splice(i, 1);
      for (const text of texts) query.push([encodeParam(part.name), encoded ? text : encodeParam(text)]);
    }
  };

  switch (mutation.kind) {
    case "none":
      break;
    case "valid":
    case "value": {
      const part = parts[mutation.part];
      if (!part) break;
      if (part.in === "body") setPath(root, part.path, mutation.value, false);
      else urlValue(part, mutation.value, false);
      break;
    }
    case "raw": {
      const part = parts[mutation.part];
      if (part && part.in !== "body") urlValue(part, mutation.text, true);
      break;
    }
    case "drop": {
      const part = parts[mutation.part];
      if (!part) break;
      if (part.in === "body") setPath(root, part.path, undefined, true);
      else if (part.in === "path") pathText[part.name] = "";
      else
        for (let i = query.length - 1; i >= 0; i--)
          if (query[i]?.[0] === encodeParam(part.name)) query.splice(i, 1);
      break;
    }
    case "add-key": {
      const objects = objectsOf(root.value);
      if (objects.length === 0 || !op.body) {
        query.push([encodeParam(mutation.key), encodeParam(toParamText(mutation.value))]);
        break;
      }
      const target = objects[mutation.target % objects.length] as Record<string, unknown>;
      setAt({ parent: target, key: mutation.key }, mutation.value);
      break;
    }
    case "rename-key": {
      const objects = objectsOf(root.value).filter((object) => Object.keys(object).length > 0);
      const target = objects[mutation.target % Math.max(objects.length, 1)];
      if (target) {
        const keys = Object.keys(target);
        renameKey(target, keys[mutation.target % keys.length] as string, mutation.key);
      }
      break;
    }
    case "body-text":
      sendBody = true;
      bodyText = mutateText(toJsonText(root.value ?? {}), mutation.op);
      break;
    case "content-type":
      sendBody = true;
      contentType = mutation.value;
      break;
    case "whole-body":
      sendBody = true;
      root.value = mutation.value;
      break;
  }

  let url = op.path.replace(/\{([^}]+)\}/g, (_match, name: string) => pathText[name] ?? "");
  if (query.length > 0) url += `?${query.map(([name, value]) => `${name}=${value}`).join("&")}`;
  const headers: Record<string, string> = { ...auth };
  let body: Buffer | undefined;
  if (sendBody) {
    body = bodyText ?? Buffer.from(toJsonText(root.value ?? {}), "utf8");
    if (contentType !== null) headers["content-type"] = contentType;
  }
  return { method: op.method, url, headers, body, mutation: mutationLabel(parts, mutation) };
}
