import { type Static, Type } from "@sinclair/typebox";
import { describedPattern } from "../core/http/pattern-words.ts";
import { AnyKeyRecord, KeyedRecord, Nullable } from "../core/http/schemas.ts";

const NAME_PATTERN = describedPattern(
  "^[A-Za-z0-9][A-Za-z0-9._-]*$",
  "letters, digits, '.', '_' and '-', starting with a letter or digit",
);
const Name = (description: string) =>
  Type.String({ minLength: 1, maxLength: 128, pattern: NAME_PATTERN, description });

export const WorkflowAssignment = Type.Object(
  {
    purpose: Type.String({ minLength: 1, maxLength: 64, description: "A purpose the app declares" }),
    workflow_name: Name("An approved workflow of the tenant"),
    is_default: Type.Optional(
      Type.Boolean({ description: "Runs the purpose when a caller names no workflow; one per purpose" }),
    ),
  },
  { additionalProperties: false },
);

export const AppInstallationWrite = Type.Object(
  {
    app_name: Type.Optional(
      Type.String({
        maxLength: 64,
        description: "The resource's app_name may be sent; it must equal the appName of the path",
      }),
    ),
    integrations: Type.Optional(
      Type.Array(Name("An integration of the tenant"), {
        maxItems: 100,
        uniqueItems: true,
        description:
          "The whole binding set: replaces the previous one. Omitted: none on the first PUT, unchanged later",
      }),
    ),
    attached_workflows: Type.Optional(
      Type.Array(Name("A workflow of the tenant"), {
        maxItems: 100,
        uniqueItems: true,
        description: "Omitted: unchanged; [] clears",
      }),
    ),
    workflow_assignments: Type.Optional(
      Type.Array(WorkflowAssignment, { maxItems: 100, description: "Omitted: unchanged; [] clears" }),
    ),
    config: Type.Optional(
      KeyedRecord(128, Type.String({ maxLength: 4096 }), {
        maxProperties: 100,
        description:
          "Install metadata: replaces the previous config when present; omitted: unchanged. Keys the sre app reads: remediation, off (the default) or on_request (an investigation asked to remediate may propose a change to the workspace's git integration, pushed only when approved); another value is 400 naming config.remediation",
      }),
    ),
    enabled: Type.Optional(Type.Boolean({ description: "Soft enable or disable; omitted: unchanged" })),
  },
  { $id: "AppInstallationWrite", additionalProperties: false },
);
export type AppInstallationWrite = Static<typeof AppInstallationWrite>;

const Rfc3339OrEmpty = (description: string) => Type.String({ description });

export const AppInstallation = Type.Object(
  {
    app_name: Type.String({ description: "Catalog slug; the import id" }),
    id: Type.String({ description: "Installation id when configured, empty otherwise" }),
    configured: Type.Boolean(),
    status: Type.Union([Type.Literal("active"), Type.Literal("disabled"), Type.Literal("not_installed")]),
    installed_at: Rfc3339OrEmpty("RFC 3339 when configured, empty otherwise"),
    updated_at: Rfc3339OrEmpty(
      "RFC 3339 when configured, empty otherwise; unchanged by a PUT that changes nothing",
    ),
    app_version: Type.String(),
    category: Type.String(),
    description: Type.String(),
    display_name: Type.String(),
    mcp_url: Type.String({
      description: "Streamable HTTP MCP endpoint (absolute); empty when the app has none",
    }),
    remote_runners: Type.Array(Type.String(), { description: "Always empty: Vigil runs no remote runners" }),
    workflow_purposes: Type.Array(Type.Object({ purpose: Type.String(), workflow_name: Type.String() }), {
      description: "Each declared purpose with the default workflow provisioned for it",
    }),
    integrations: Type.Array(Type.String()),
    attached_workflows: Type.Array(Type.String()),
    workflow_assignments: Type.Array(
      Type.Object({ purpose: Type.String(), workflow_name: Type.String(), is_default: Type.Boolean() }),
    ),
    config: AnyKeyRecord(Type.String()),
    enabled: Type.Boolean(),
    app_token: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          "The installed app's token (Bearer) with the scopes the app needs (sre_alerts_read, sre_investigations_read, sre_investigations_write, aios_automation_read, aios_automation_write). Shown only to callers holding apps_write and every one of those scopes, so no key gets hold of a credential that can do more than it can: null to other callers. Absent when the app is not configured, or when its token was revoked in /api/v1/keys (rotate it to issue another)",
      }),
    ),
  },
  { $id: "AppInstallation" },
);
export type AppInstallation = Static<typeof AppInstallation>;

export const DISCOVERY_STATUSES = ["running", "succeeded", "failed", "skipped"] as const;

export const DiscoveryRun = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    status: Type.Union(
      DISCOVERY_STATUSES.map((status) => Type.Literal(status)),
      {
        description:
          "running until the job finishes; failed carries error; skipped: skip_if_exists found a run",
      },
    ),
    error: Nullable(Type.String()),
    started_at: Type.String({ format: "date-time" }),
    finished_at: Nullable(Type.String({ format: "date-time" })),
    result: Type.Object(
      {
        services: Type.Optional(
          Type.Array(
            Type.Object({
              name: Type.String(),
              environments: Type.Array(Type.String()),
              clusters: Type.Array(Type.String()),
              namespaces: Type.Array(Type.String()),
              seen_in: Type.Array(Type.String()),
            }),
          ),
        ),
        environments: Type.Optional(Type.Array(Type.String())),
        clusters: Type.Optional(Type.Array(Type.String())),
        calls: Type.Optional(Type.Array(Type.Object({ from: Type.String(), to: Type.String() }))),
        integrations: Type.Optional(
          Type.Array(
            Type.Object({
              name: Type.String(),
              type: Type.String(),
              ok: Type.Boolean(),
              error: Nullable(Type.String()),
              counts: Type.Record(Type.String(), Type.Integer()),
            }),
          ),
        ),
      },
      { description: "What the run learned; empty while running and for skipped runs" },
    ),
  },
  { $id: "DiscoveryRun" },
);
export type DiscoveryRun = Static<typeof DiscoveryRun>;

export const DiscoveryRunStart = Type.Object(
  {
    skip_if_exists: Type.Optional(
      Type.Boolean({
        description: "When the workspace already has a run: store and answer a skipped run (200)",
      }),
    ),
  },
  { $id: "DiscoveryRunStart", additionalProperties: false },
);
export type DiscoveryRunStart = Static<typeof DiscoveryRunStart>;

export const SetupStatus = Type.Object(
  {
    observability_ready: Type.Boolean({
      description: "At least one bound, reachable metrics (prometheus) or alert (alertmanager) integration",
    }),
    missing: Type.Array(Type.String(), {
      description: "What to do before observability is ready; empty when ready",
    }),
    integrations: Type.Array(
      Type.Object({
        name: Type.String(),
        type: Type.String(),
        bound: Type.Boolean(),
        reachable: Nullable(
          Type.Boolean({ description: "Probed for bound prometheus and alertmanager; null otherwise" }),
        ),
      }),
    ),
  },
  { $id: "SetupStatus" },
);
export type SetupStatus = Static<typeof SetupStatus>;
