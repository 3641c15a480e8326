// svc_sre_alert_webhook: an SRE alert-ingest registration (POST/GET/PUT/DELETE
// /app/{app_name}/api/v1/alerts/webhook). source, app_name and integration identify it and force a
// new one when changed; the classify settings update in place. Settings left out of the
// configuration take their defaults, so removing one from the file sets it back.
import { catalogLacks } from "../catalog.ts";
import { ApiError, apiDiagnostic, isGone } from "../client.ts";
import { type Diagnostic, DiagnosticError, error, warning } from "../diagnostics.ts";
import { fullObject, type Resource, type ResourceContext } from "../resource.ts";
import type { ResourceSchema } from "../schema.ts";
import type { Shape } from "../shape.ts";
import { type ObjectValue, outsideWholeRange, sameValue, textOf, UNKNOWN, type Value } from "../values.ts";

interface Registration {
  id: string;
  platform_webhook_id: string;
  platform_webhook_url: string;
  app_name: string;
  source: string;
  integration: string;
  auto_investigate: boolean;
  classify_mode: string;
  classify_batch_window_seconds: number;
  classify_bucket_by: string;
  classify_critical_bypass: boolean;
}

/** Every field of Registration: state is made of them. */
const REGISTRATION: Shape = {
  id: "string",
  platform_webhook_id: "string",
  platform_webhook_url: "string",
  app_name: "string",
  source: "string",
  integration: "string",
  auto_investigate: "boolean",
  classify_mode: "string",
  classify_batch_window_seconds: "number",
  classify_bucket_by: "string",
  classify_critical_bypass: "boolean",
};

/** The value an omitted setting plans to (the service's own defaults). */
export const WEBHOOK_DEFAULTS = {
  app_name: "sre",
  auto_investigate: false,
  classify_mode: "batch",
  classify_batch_window_seconds: 60,
  classify_bucket_by: "storm_scope",
  classify_critical_bypass: true,
  integration: "",
} as const;

const SETTINGS = [
  "auto_investigate",
  "classify_mode",
  "classify_batch_window_seconds",
  "classify_bucket_by",
  "classify_critical_bypass",
] as const;
const IDENTITY = ["source", "app_name", "integration"] as const;
const COMPUTED = ["platform_webhook_id", "platform_webhook_url", "id", "trigger_url"] as const;

const schema: ResourceSchema = {
  version: 0,
  description: "Registers an SRE alert-ingest webhook: monitoring sources post alerts to its trigger_url.",
  attributes: {
    source: {
      type: "string",
      mode: "required",
      description:
        "Alert source type; must match a registered SRE webhook parser (e.g. alertmanager, datadog). Changing it creates a new registration.",
    },
    app_name: {
      type: "string",
      mode: "optional_computed",
      description: 'App that receives the alerts. Default "sre". Changing it creates a new registration.',
    },
    auto_investigate: {
      type: "bool",
      mode: "optional_computed",
      description: "When true, newly ingested alerts auto-start a deep-dive investigation. Default false.",
    },
    classify_mode: {
      type: "string",
      mode: "optional_computed",
      description:
        'How alerts are classified: "batch" (grouped within the debounce window) or "immediate". Default "batch".',
    },
    classify_batch_window_seconds: {
      type: "number",
      mode: "optional_computed",
      description: "Debounce window of batch mode in seconds, 15 to 300. Default 60.",
    },
    classify_bucket_by: {
      type: "string",
      mode: "optional_computed",
      description: 'What batch mode groups by: "storm_scope" or "service". Default "storm_scope".',
    },
    classify_critical_bypass: {
      type: "bool",
      mode: "optional_computed",
      description: "When true, critical and P1 alerts skip batching. Default true.",
    },
    integration: {
      type: "string",
      mode: "optional_computed",
      description:
        'Integration instance name the webhook receives payloads for; default "" (the default integration). Changing it creates a new registration.',
    },
    platform_webhook_id: { type: "string", mode: "computed", description: "Webhook UUID, same as id." },
    platform_webhook_url: {
      type: "string",
      mode: "computed",
      sensitive: true,
      description: "Relative trigger path including the apiKey query parameter.",
    },
    id: { type: "string", mode: "computed", description: "Webhook UUID of this registration." },
    trigger_url: {
      type: "string",
      mode: "computed",
      sensitive: true,
      description: "Absolute URL for monitor webhooks: service_url + /platform + platform_webhook_url.",
    },
  },
};

const ATTRIBUTES = Object.keys(schema.attributes);

function validate(config: ObjectValue): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const oneOf = (name: string, allowed: readonly string[]) => {
    const value = config[name];
    if (typeof value === "string" && !allowed.includes(value)) {
      diagnostics.push(
        error(`Invalid ${name}`, `${name} must be one of ${allowed.join(", ")}; got "${value}".`, [name]),
      );
    }
  };
  oneOf("classify_mode", ["batch", "immediate"]);
  oneOf("classify_bucket_by", ["storm_scope", "service"]);
  const window = outsideWholeRange(config.classify_batch_window_seconds, 15, 300);
  if (window !== null) {
    diagnostics.push(
      error(
        "Invalid classify_batch_window_seconds",
        `classify_batch_window_seconds must be a whole number of seconds from 15 to 300; got ${window}.`,
        ["classify_batch_window_seconds"],
      ),
    );
  }
  if (typeof config.source === "string" && !/^[a-z0-9_-]{1,64}$/.test(config.source)) {
    diagnostics.push(
      error("Invalid source", `source must be the name of an alert source parser; got "${config.source}".`, [
        "source",
      ]),
    );
  }
  if (typeof config.app_name === "string" && !/^[a-z0-9_-]{1,64}$/.test(config.app_name)) {
    diagnostics.push(
      error("Invalid app_name", `app_name must be an app slug; got "${config.app_name}".`, ["app_name"]),
    );
  }
  const integration = config.integration;
  if (
    typeof integration === "string" &&
    (!/^[A-Za-z0-9._~-]{0,128}$/.test(integration) || integration === "." || integration === "..")
  ) {
    diagnostics.push(
      error(
        "Invalid integration",
        'integration may hold letters, digits and . _ ~ - (at most 128, not "." or ".."), or be empty for the default integration.',
        ["integration"],
      ),
    );
  }
  return diagnostics;
}

function requireServiceUrl(ctx: ResourceContext): string {
  const url = ctx.settings.serviceUrl;
  if (!url) {
    throw new DiagnosticError([
      error(
        "Missing provider setting service_url",
        'svc_sre_alert_webhook needs service_url in the provider "svc" block (or SVC_SERVICE_URL): its trigger_url starts with it.',
      ),
    ]);
  }
  return url;
}

const triggerUrl = (serviceUrl: string, relative: Value) =>
  typeof relative === "string" ? `${serviceUrl}/platform${relative}` : UNKNOWN;

/**
 * The service hides the trigger token from a key without sre_alerts_write (`apiKey=hidden`). The
 * token did not change, so a refresh with such a key keeps the one in state.
 */
const isRedacted = (path: string) => /[?&]apiKey=hidden(&|$)/.test(path);

/** The state for a registration; `prior` keeps the trigger URL the service hid from the key. */
function stateOf(registration: Registration, serviceUrl: string, prior: ObjectValue | null): ObjectValue {
  const before = prior?.platform_webhook_url;
  const relativeUrl =
    isRedacted(registration.platform_webhook_url) && typeof before === "string" && before !== ""
      ? before
      : registration.platform_webhook_url;
  return fullObject(schema, {
    source: registration.source,
    app_name: registration.app_name,
    auto_investigate: registration.auto_investigate,
    classify_mode: registration.classify_mode,
    classify_batch_window_seconds: registration.classify_batch_window_seconds,
    classify_bucket_by: registration.classify_bucket_by,
    classify_critical_bypass: registration.classify_critical_bypass,
    integration: registration.integration,
    platform_webhook_id: registration.platform_webhook_id,
    platform_webhook_url: relativeUrl,
    id: registration.id,
    trigger_url: triggerUrl(serviceUrl, relativeUrl),
  });
}

/**
 * What the service's 404 names when the registration itself is gone: its id, or the app when the
 * app no longer takes alerts (see isGone).
 */
const GONE = ["id", "app_name"];

const basePath = (appName: Value | undefined) =>
  `/app/${encodeURIComponent(textOf(appName))}/api/v1/alerts/webhook`;

function settingsBody(planned: ObjectValue) {
  return Object.fromEntries(SETTINGS.map((name) => [name, planned[name]]));
}

/**
 * A replacement deletes the registration first: the app and the source it names must be ones the
 * service takes, and no other registration may hold the new (app, source, integration), which the
 * service allows once (the create would fail 409 after the delete). A 404 for an app the catalog has
 * is no refusal: the same apply may configure it.
 */
async function checkReplacement(
  planned: ObjectValue,
  prior: ObjectValue,
  ctx: ResourceContext,
): Promise<Diagnostic[]> {
  const { app_name: appName, source, integration } = planned;
  if (typeof appName !== "string" || typeof source !== "string") return [];
  const client = ctx.client();
  const unknownApp = await catalogLacks(client, appName);
  if (unknownApp) return [unknownApp];
  const query: Record<string, string> = { source };
  if (typeof integration === "string") query.integration = integration;
  let holders: Registration[] = [];
  try {
    holders = await client.request<Registration[]>("GET", basePath(appName), {
      query,
      shape: [REGISTRATION],
    });
  } catch (thrown) {
    if (thrown instanceof ApiError && thrown.status === 400 && thrown.body?.details?.field === "source") {
      return [
        error("Invalid source", `${thrown.body.error ?? thrown.message}. Nothing was changed.`, ["source"]),
      ];
    }
    if (!(thrown instanceof ApiError && thrown.status === 404)) {
      throw apiDiagnostic(thrown, "Cannot check the replacement registration", ATTRIBUTES);
    }
  }
  const holder = holders.find((found) => found.integration === integration && found.id !== prior.id);
  if (!holder) return [];
  const changed = IDENTITY.find((name) => !sameValue(prior[name], planned[name])) ?? "source";
  const which = holder.integration ? `integration "${holder.integration}"` : "the default integration";
  const importId = [appName, source, ...(holder.integration ? [holder.integration] : [])].join("/");
  return [
    error(
      "Another registration holds this source and integration",
      `App "${appName}" already has registration ${holder.id} for source "${source}" and ${which} in this workspace, and the service takes one per source and integration. Nothing was changed: the replacement would have deleted registration ${textOf(prior.id)} first, then failed to create this one. Either import the existing registration (tofu import <address> ${importId}, into a resource that holds none, e.g. after tofu state rm of this one), or delete it (DELETE ${basePath(appName)}/${holder.id}) if nothing sends alerts to its trigger URL, and plan again.`,
      [changed],
    ),
  ];
}

export const alertWebhookResource: Resource = {
  typeName: "svc_sre_alert_webhook",
  schema,
  validate,
  checkReplacement,

  plan({ prior, proposed, config, ctx }) {
    const diagnostics = validate(config);
    const serviceUrl = requireServiceUrl(ctx);
    const planned: ObjectValue = { ...proposed };
    for (const [name, fallback] of Object.entries(WEBHOOK_DEFAULTS)) {
      planned[name] =
        config[name] === null || config[name] === undefined ? fallback : (config[name] as Value);
    }
    const requiresReplace = prior
      ? IDENTITY.filter((name) => !sameValue(prior[name], planned[name])).map((name) => [name])
      : [];
    if (!prior || requiresReplace.length > 0) {
      for (const name of COMPUTED) planned[name] = UNKNOWN;
    } else {
      for (const name of COMPUTED) planned[name] = prior[name] ?? null;
      planned.trigger_url = triggerUrl(serviceUrl, prior.platform_webhook_url ?? null);
    }
    return { planned, requiresReplace, diagnostics };
  },

  async apply({ prior, planned, ctx }) {
    const client = ctx.client();
    if (!planned) {
      if (!prior) return null;
      try {
        await client.request("DELETE", `${basePath(prior.app_name)}/${textOf(prior.id)}`);
      } catch (thrown) {
        if (!isGone(thrown, GONE)) {
          throw apiDiagnostic(thrown, "Cannot delete the alert-ingest webhook", ATTRIBUTES);
        }
      }
      return null;
    }
    const serviceUrl = requireServiceUrl(ctx);
    try {
      const registration = prior
        ? await client.request<Registration>("PUT", `${basePath(planned.app_name)}/${textOf(prior.id)}`, {
            body: settingsBody(planned),
            shape: REGISTRATION,
          })
        : await client.request<Registration>("POST", basePath(planned.app_name), {
            body: { source: planned.source, integration: planned.integration, ...settingsBody(planned) },
            shape: REGISTRATION,
          });
      return stateOf(registration, serviceUrl, prior);
    } catch (thrown) {
      throw apiDiagnostic(
        thrown,
        prior ? "Cannot update the alert-ingest webhook" : "Cannot create the alert-ingest webhook",
        ATTRIBUTES,
      );
    }
  },

  async read(state, ctx) {
    const serviceUrl = requireServiceUrl(ctx);
    try {
      const registration = await ctx
        .client()
        .request<Registration>("GET", `${basePath(state.app_name)}/${textOf(state.id)}`, {
          shape: REGISTRATION,
        });
      return stateOf(registration, serviceUrl, state);
    } catch (thrown) {
      if (isGone(thrown, GONE)) return null;
      throw apiDiagnostic(thrown, "Cannot read the alert-ingest webhook", ATTRIBUTES);
    }
  },

  async importState(id, ctx) {
    const serviceUrl = requireServiceUrl(ctx);
    const parts = id.split("/");
    const [appName, source, integration = ""] = parts;
    if (parts.length < 2 || parts.length > 3 || !appName || !source) {
      throw new DiagnosticError([
        error(
          "Invalid import ID",
          `Expected "{app_name}/{source}/{integration}" or "{app_name}/{source}" (the default integration); got "${id}".`,
        ),
      ]);
    }
    let found: Registration[];
    try {
      found = await ctx.client().request<Registration[]>("GET", basePath(appName), {
        query: { source, integration },
        shape: [REGISTRATION],
      });
    } catch (thrown) {
      throw apiDiagnostic(thrown, "Cannot look up the alert-ingest webhook", ATTRIBUTES);
    }
    const registration = found[0];
    if (!registration) {
      const which = integration ? `integration "${integration}"` : "the default integration";
      throw new DiagnosticError([
        error(
          "Cannot import: no such alert-ingest webhook",
          `App "${appName}" has no registration for source "${source}" and ${which} in this workspace.`,
        ),
      ]);
    }
    if (isRedacted(registration.platform_webhook_url)) {
      ctx.warn(
        warning(
          "The trigger token is hidden from this API key",
          "The key lacks sre_alerts_write, so the service answers apiKey=hidden: trigger_url and platform_webhook_url hold no usable token until a refresh with a key that has it.",
        ),
      );
    }
    return stateOf(registration, serviceUrl, null);
  },
};
