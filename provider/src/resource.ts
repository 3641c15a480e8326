// What a resource type implements; the provider turns protocol requests into these calls.
import type { Client, Settings } from "./client.ts";
import type { Diagnostic, PathStep } from "./diagnostics.ts";
import type { ResourceSchema } from "./schema.ts";
import type { ObjectValue } from "./values.ts";

export interface ResourceContext {
  settings: Settings;
  /** The API client; throws a diagnostic when the provider settings cannot make one. */
  client(): Client;
  /** Adds a warning to the answer of the current request. */
  warn(diagnostic: Diagnostic): void;
}

export interface PlanRequest {
  prior: ObjectValue | null;
  proposed: ObjectValue;
  config: ObjectValue;
  ctx: ResourceContext;
}

export interface PlanResult {
  planned: ObjectValue;
  requiresReplace: PathStep[][];
  diagnostics: Diagnostic[];
}

export interface ApplyRequest {
  prior: ObjectValue | null;
  /** null when the resource is being destroyed. */
  planned: ObjectValue | null;
  config: ObjectValue | null;
  ctx: ResourceContext;
}

export interface Resource {
  typeName: string;
  schema: ResourceSchema;
  validate(config: ObjectValue): Diagnostic[];
  plan(request: PlanRequest): PlanResult;
  /**
   * Asked when a plan replaces the object, before anything is removed: what the service would
   * refuse in the replacement (an unknown value), so a typo fails the plan instead of the apply
   * that has already deleted the object it was to replace. `prior` is the object being replaced.
   */
  checkReplacement?(planned: ObjectValue, prior: ObjectValue, ctx: ResourceContext): Promise<Diagnostic[]>;
  apply(request: ApplyRequest): Promise<ObjectValue | null>;
  /** The remote object as state; null when it is gone (OpenTofu then plans to create it again). */
  read(state: ObjectValue, ctx: ResourceContext): Promise<ObjectValue | null>;
  importState(id: string, ctx: ResourceContext): Promise<ObjectValue>;
}

/** The full object value of a schema: every attribute present, null where nothing is given. */
export function fullObject(schema: ResourceSchema, values: Partial<ObjectValue>): ObjectValue {
  return Object.fromEntries(Object.keys(schema.attributes).map((name) => [name, values[name] ?? null]));
}
