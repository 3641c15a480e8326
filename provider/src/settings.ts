// The provider block: workspace_id, service_url and api_key, each also read from the environment
// (SVC_WORKSPACE_ID, SVC_SERVICE_URL, SVC_API_KEY) when the block leaves it out.
import { Client, type Settings, withoutCredentials } from "./client.ts";
import { type Diagnostic, DiagnosticError, error } from "./diagnostics.ts";
import type { ResourceSchema } from "./schema.ts";
import { asObject, UNKNOWN, type Value } from "./values.ts";

/** Where requests go when service_url is not set: a Vigil started with its defaults on this machine. */
export const DEFAULT_SERVICE_URL = "http://127.0.0.1:8080";

export const PROVIDER_SCHEMA: ResourceSchema = {
  version: 0,
  description: "Manages Vigil app bindings and SRE alert-ingest webhooks.",
  attributes: {
    workspace_id: {
      type: "string",
      mode: "optional",
      description:
        "Workspace (org) UUID every request acts in; required by both resources. Defaults to SVC_WORKSPACE_ID.",
    },
    service_url: {
      type: "string",
      mode: "optional",
      description:
        "Base URL of the service, e.g. https://vigil.example.com; required by svc_sre_alert_webhook, whose trigger_url it starts. Defaults to SVC_SERVICE_URL, else http://127.0.0.1:8080 for svc_app.",
    },
    api_key: {
      type: "string",
      mode: "optional",
      sensitive: true,
      description: "API key sent as a bearer token. Defaults to SVC_API_KEY.",
    },
  },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function text(config: Record<string, Value>, name: string): string | null | typeof UNKNOWN {
  const value = config[name];
  if (value === UNKNOWN) return UNKNOWN;
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

/** Checks what is known of the provider block; unknown values are checked again when configured. */
export function validateSettings(configValue: Value): Diagnostic[] {
  const config = asObject(configValue) ?? {};
  const diagnostics: Diagnostic[] = [];
  const workspace = text(config, "workspace_id");
  if (typeof workspace === "string" && !UUID.test(workspace)) {
    diagnostics.push(
      error("Invalid workspace_id", `workspace_id must be a workspace UUID, got "${workspace}".`, [
        "workspace_id",
      ]),
    );
  }
  const url = text(config, "service_url");
  if (typeof url === "string" && hasCredentials(url)) {
    diagnostics.push(
      error(
        "Invalid service_url",
        "service_url must not carry credentials; set api_key (or SVC_API_KEY) instead.",
        ["service_url"],
      ),
    );
  } else if (typeof url === "string" && !isHttpUrl(url)) {
    diagnostics.push(
      error(
        "Invalid service_url",
        `service_url must be an http:// or https:// URL, got "${withoutCredentials(url)}".`,
        ["service_url"],
      ),
    );
  }
  return diagnostics;
}

/** A user name or password in the URL: fetch refuses such URLs, and messages would show them. */
function hasCredentials(text: string): boolean {
  if (withoutCredentials(text) !== text) return true;
  try {
    const url = new URL(text);
    return url.username !== "" || url.password !== "";
  } catch {
    return false;
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === "http:" || url.protocol === "https:") && url.host !== "" && !url.search;
  } catch {
    return false;
  }
}

/** The settings from the block and the environment; errors name the attribute at fault. */
export function resolveSettings(configValue: Value, env: NodeJS.ProcessEnv = process.env): Settings {
  const config = asObject(configValue) ?? {};
  const diagnostics = validateSettings(config);
  for (const name of ["workspace_id", "service_url", "api_key"]) {
    if (config[name] === UNKNOWN) {
      diagnostics.push(
        error(`${name} is not known yet`, `Set ${name} to a value known before apply.`, [name]),
      );
    }
  }
  const pick = (name: string, envName: string) => {
    const value = text(config, name);
    return typeof value === "string" ? value : env[envName]?.trim() || null;
  };
  const workspaceId = pick("workspace_id", "SVC_WORKSPACE_ID");
  const serviceUrl = pick("service_url", "SVC_SERVICE_URL");
  if (workspaceId && !UUID.test(workspaceId) && text(config, "workspace_id") === null) {
    diagnostics.push(
      error("Invalid SVC_WORKSPACE_ID", "SVC_WORKSPACE_ID must be a workspace UUID.", ["workspace_id"]),
    );
  }
  if (serviceUrl && text(config, "service_url") === null) {
    if (hasCredentials(serviceUrl)) {
      diagnostics.push(
        error(
          "Invalid SVC_SERVICE_URL",
          "SVC_SERVICE_URL must not carry credentials; set SVC_API_KEY (or api_key) instead.",
          ["service_url"],
        ),
      );
    } else if (!isHttpUrl(serviceUrl)) {
      diagnostics.push(
        error("Invalid SVC_SERVICE_URL", "SVC_SERVICE_URL must be an http(s) URL.", ["service_url"]),
      );
    }
  }
  if (!workspaceId && config.workspace_id !== UNKNOWN) {
    diagnostics.push(
      error(
        "Missing provider setting workspace_id",
        "Both svc_app and svc_sre_alert_webhook act within one workspace: set workspace_id (or SVC_WORKSPACE_ID) to its UUID.",
        ["workspace_id"],
      ),
    );
  }
  if (diagnostics.length > 0) throw new DiagnosticError(diagnostics);
  return {
    workspaceId,
    serviceUrl: serviceUrl ? serviceUrl.replace(/\/+$/, "") : null,
    apiKey: pick("api_key", "SVC_API_KEY"),
  };
}

/**
 * A client for the settings; both resources act within one workspace, so it must be set.
 * `stopSignal` is the provider's: StopProvider aborts what the client is doing.
 */
export function clientFor(settings: Settings, stopSignal: AbortSignal): Client {
  if (!settings.workspaceId) {
    throw new DiagnosticError([
      error(
        "Missing provider setting workspace_id",
        'Set workspace_id in the provider "svc" block (or SVC_WORKSPACE_ID) to the UUID of the workspace to manage.',
      ),
    ]);
  }
  return new Client(settings.serviceUrl ?? DEFAULT_SERVICE_URL, settings.workspaceId, settings.apiKey, {
    stopSignal,
  });
}
