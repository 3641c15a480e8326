// svc_app: the integration bindings and install config of a catalog app in one workspace
// (GET/PUT/DELETE /api/v1/apps/{app_name}). An optional attribute left out of the configuration is
// left alone on the service (null in state, never read back); a set one is sent on every apply and
// read back for drift. bootstrap_discovery starts the SRE discovery run after binding.
import { catalogLacks } from "../catalog.ts";
import { apiDiagnostic, type Client, isGone } from "../client.ts";
import { type Diagnostic, DiagnosticError, diagnosticsOf, error, warning } from "../diagnostics.ts";
import { fullObject, type Resource, type ResourceContext } from "../resource.ts";
import type { ResourceSchema } from "../schema.ts";
import type { Shape } from "../shape.ts";
import {
  asObject,
  type ObjectValue,
  outsideWholeRange,
  sameValue,
  textOf,
  UNKNOWN,
  type Value,
} from "../values.ts";

export interface Installation {
  app_name: string;
  id: string;
  configured: boolean;
  status: string;
  installed_at: string;
  updated_at: string;
  app_version: string;
  category: string;
  description: string;
  display_name: string;
  mcp_url: string;
  remote_runners: string[];
  workflow_purposes: { purpose: string; workflow_name: string }[];
  integrations: string[];
  attached_workflows: string[];
  workflow_assignments: { purpose: string; workflow_name: string; is_default?: boolean }[];
  config: Record<string, string>;
  enabled: boolean;
  /** Null: hidden from this key (it lacks a scope the token holds); absent: no working token. */
  app_token?: string | null;
}

/** What state is made of: every field of Installation but the token, which a key may not see. */
const INSTALLATION: Shape = {
  app_name: "string",
  id: "string",
  configured: "boolean",
  status: "string",
  installed_at: "string",
  updated_at: "string",
  app_version: "string",
  category: "string",
  description: "string",
  display_name: "string",
  mcp_url: "string",
  remote_runners: ["string"],
  workflow_purposes: [{ purpose: "string", workflow_name: "string" }],
  integrations: ["string"],
  attached_workflows: ["string"],
  workflow_assignments: [{ purpose: "string", workflow_name: "string", "is_default?": "boolean" }],
  config: "string map",
  enabled: "boolean",
  "app_token?": "string",
};

interface DiscoveryRun {
  id: string;
  status: string;
  error: string | null;
}

const DISCOVERY_RUN: Shape = { id: "string", status: "string", "error?": "string" };

/** Defaults of the discovery settings (the spec leaves them open). */
export const DISCOVERY_DEFAULTS = { pollTimeoutSeconds: 300, setupWaitAttempts: 0 };
export const SETUP_POLL_INTERVAL_MS = 2000;
const RUN_POLL_INTERVAL_MS = 1000;

/** Optional attributes sent to the service when set and read back for drift. */
const MANAGED = ["integrations", "attached_workflows", "workflow_assignments", "config", "enabled"] as const;
/** Optional attributes that only steer the provider's own bootstrap steps. */
const BOOTSTRAP = [
  "bootstrap_discovery",
  "discovery_poll_timeout_seconds",
  "discovery_setup_wait_attempts",
  "discovery_skip_if_exists",
] as const;

const schema: ResourceSchema = {
  version: 0,
  description:
    "Manages the integration bindings and install config of an already-installed catalog app in the provider's workspace.",
  attributes: {
    app_name: {
      type: "string",
      mode: "required",
      description: "Catalog slug of the app, e.g. sre. Changing it forces replacement.",
    },
    integrations: {
      type: ["list", "string"],
      mode: "optional",
      description:
        "Integration names (they must already exist in the workspace); replaces the full binding set on each apply. Omit to leave the bindings unmanaged.",
    },
    attached_workflows: {
      type: ["list", "string"],
      mode: "optional",
      description:
        "Legacy operator-attached workflow names; omit to leave unchanged, an empty list clears them.",
    },
    workflow_assignments: {
      mode: "optional",
      description: "Workflow chosen per purpose; omit to leave unchanged, an empty list clears all.",
      nestedList: {
        purpose: {
          type: "string",
          mode: "required",
          description: "A purpose the app declares (see workflow_purposes).",
        },
        workflow_name: {
          type: "string",
          mode: "required",
          description: "An approved, operator-owned workflow.",
        },
        is_default: {
          type: "bool",
          mode: "optional",
          description: "Selected when a caller omits workflow_name; at most one default per purpose.",
        },
      },
    },
    bootstrap_discovery: {
      type: "bool",
      mode: "optional",
      description:
        "When true, each apply that creates or changes the binding then runs the app discovery API (POST /app/sre/api/discovery/runs); intended for app_name sre.",
    },
    config: {
      type: ["map", "string"],
      mode: "optional",
      description:
        "Install metadata; replaces the previous config when set, omit to leave the remote config unchanged.",
    },
    discovery_poll_timeout_seconds: {
      type: "number",
      mode: "optional",
      description: `Seconds to wait for discovery to reach succeeded or failed, a whole number from 1 to 3600; default ${DISCOVERY_DEFAULTS.pollTimeoutSeconds}.`,
    },
    discovery_setup_wait_attempts: {
      type: "number",
      mode: "optional",
      description:
        "Number of polls of GET /api/setup, 2 seconds apart, for observability_ready before discovery starts; default 0 (start at once).",
    },
    discovery_skip_if_exists: {
      type: "bool",
      mode: "optional",
      description: "Skip starting discovery when the workspace already has at least one discovery run.",
    },
    enabled: {
      type: "bool",
      mode: "optional",
      description: "Soft enable or disable of the app; omit to leave it unmanaged.",
    },
    app_token: {
      type: "string",
      mode: "computed",
      sensitive: true,
      description: "Token the app uses to authenticate with the control plane; present when configured.",
    },
    app_version: { type: "string", mode: "computed", description: "Installed or catalog version." },
    category: { type: "string", mode: "computed", description: "Catalog category label." },
    configured: {
      type: "bool",
      mode: "computed",
      description: "True when installed and configured for the workspace.",
    },
    description: { type: "string", mode: "computed", description: "Catalog description." },
    discovery_run_id: {
      type: "string",
      mode: "computed",
      description:
        "UUID of the discovery run started by bootstrap_discovery; empty when skipped or bootstrap_discovery is false.",
    },
    discovery_run_status: {
      type: "string",
      mode: "computed",
      description:
        "Status from the last bootstrap apply (succeeded, failed, skipped, or running when the wait ran out).",
    },
    display_name: { type: "string", mode: "computed", description: "Human-readable name." },
    id: { type: "string", mode: "computed", description: "Installation UUID when configured." },
    installed_at: { type: "string", mode: "computed", description: "RFC 3339 time of installation." },
    mcp_url: {
      type: "string",
      mode: "computed",
      description: "Streamable HTTP MCP URL when the app advertises one.",
    },
    remote_runners: {
      type: ["list", "string"],
      mode: "computed",
      description: "Remote runner ids attached.",
    },
    status: {
      type: "string",
      mode: "computed",
      description: "Installation status when configured (active, disabled).",
    },
    updated_at: { type: "string", mode: "computed", description: "RFC 3339 time of the last change." },
    workflow_purposes: {
      type: ["list", ["object", { purpose: "string", workflow_name: "string" }]],
      mode: "computed",
      description:
        "Purposes the app declares, each with purpose (machine-readable id) and workflow_name (provisioned default workflow).",
    },
  },
};

const ATTRIBUTES = Object.keys(schema.attributes);
const COMPUTED = ATTRIBUTES.filter((name) => schema.attributes[name]?.mode === "computed");
/** Computed attributes an update may change. */
const CHANGED_BY_UPDATE = ["updated_at", "status", "configured"];

function validate(config: ObjectValue): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  if (typeof config.app_name === "string" && !/^[a-z0-9_-]{1,64}$/.test(config.app_name)) {
    diagnostics.push(
      error("Invalid app_name", `app_name must be a catalog slug; got "${config.app_name}".`, ["app_name"]),
    );
  }
  const timeout = outsideWholeRange(config.discovery_poll_timeout_seconds, 1, 3600);
  if (timeout !== null) {
    diagnostics.push(
      error(
        "Invalid discovery_poll_timeout_seconds",
        `discovery_poll_timeout_seconds must be a whole number of seconds from 1 to 3600; got ${timeout}.`,
        ["discovery_poll_timeout_seconds"],
      ),
    );
  }
  const attempts = outsideWholeRange(config.discovery_setup_wait_attempts, 0, 1000);
  if (attempts !== null) {
    diagnostics.push(
      error(
        "Invalid discovery_setup_wait_attempts",
        `discovery_setup_wait_attempts must be a whole number from 0 to 1000; got ${attempts}.`,
        ["discovery_setup_wait_attempts"],
      ),
    );
  }
  const assignments = config.workflow_assignments;
  if (Array.isArray(assignments)) {
    const defaults = new Map<string, number>();
    assignments.forEach((item, index) => {
      const entry = asObject(item);
      if (entry?.is_default === true && typeof entry.purpose === "string") {
        if (defaults.has(entry.purpose)) {
          // On the attribute, not the entry: OpenTofu cannot point into a list written as an expression.
          diagnostics.push(
            error(
              "Two default workflows for one purpose",
              `workflow_assignments[${defaults.get(entry.purpose)}] and workflow_assignments[${index}] both set is_default for purpose "${entry.purpose}"; a purpose has at most one default: leave is_default out of all but one.`,
              ["workflow_assignments"],
            ),
          );
        }
        defaults.set(entry.purpose, index);
      }
    });
  }
  for (const name of ["integrations", "attached_workflows"]) {
    const list = config[name];
    if (Array.isArray(list)) {
      list.forEach((item, index) => {
        if (typeof item === "string" && list.indexOf(item) !== index) {
          diagnostics.push(error(`Duplicate entry in ${name}`, `"${item}" is listed twice.`, [name, index]));
        }
      });
    }
  }
  return diagnostics;
}

/** Whether an update changes what the service holds (else it only tunes the provider's bootstrap). */
const bindingChanges = (prior: ObjectValue, planned: ObjectValue) =>
  MANAGED.some((name) => !sameValue(prior[name], planned[name]));

const sorted = (values: string[]) => [...values].sort();
const sameSet = (a: Value, b: string[]) =>
  Array.isArray(a) &&
  a.every((item) => typeof item === "string") &&
  sameValue(sorted(a as string[]), sorted(b));

/** The remote assignments in state form: is_default stays null where the configuration left it out. */
function assignmentsOf(remote: Installation["workflow_assignments"], prior: Value): Value {
  const priorItems = Array.isArray(prior) ? prior.map(asObject) : [];
  const items = remote.map((item) => {
    const before = priorItems.find(
      (p) => p?.purpose === item.purpose && p?.workflow_name === item.workflow_name,
    );
    const isDefault = item.is_default ? true : before?.is_default === false ? false : null;
    return { purpose: item.purpose, workflow_name: item.workflow_name, is_default: isDefault };
  });
  // Same assignments in another order: keep the configured order so no diff appears.
  if (Array.isArray(prior) && prior.length === items.length) {
    const key = (v: Value) => {
      const o = asObject(v);
      return `${textOf(o?.purpose)}\u0000${textOf(o?.workflow_name)}\u0000${o?.is_default === true}`;
    };
    const a = prior.map(key).sort();
    const b = items.map(key).sort();
    if (sameValue(a, b)) return prior;
  }
  return items;
}

/**
 * The state for an installation. `prior` decides which optional attributes are managed: a null
 * there stays null. `importing` fills every one from the service. `tokenHidden`: the service does not
 * show app_token to the key (it lacks a scope), so the one in `prior` still holds; otherwise a
 * missing token is a revoked one and state empties it (see tokenHiddenFrom).
 */
export function stateOf(
  remote: Installation,
  prior: ObjectValue | null,
  options: { importing?: boolean; tokenHidden?: boolean } = {},
): ObjectValue {
  const { importing = false, tokenHidden = false } = options;
  const managed = (name: (typeof MANAGED)[number]) => importing || (prior?.[name] ?? null) !== null;
  const list = (name: "integrations" | "attached_workflows") => {
    if (!managed(name)) return null;
    const before = prior?.[name] ?? null;
    return before !== null && sameSet(before, remote[name]) ? before : [...remote[name]];
  };
  return fullObject(schema, {
    app_name: remote.app_name,
    integrations: list("integrations"),
    attached_workflows: list("attached_workflows"),
    workflow_assignments: managed("workflow_assignments")
      ? assignmentsOf(remote.workflow_assignments, prior?.workflow_assignments ?? null)
      : null,
    config: managed("config") ? { ...remote.config } : null,
    enabled: managed("enabled") ? remote.enabled : null,
    ...Object.fromEntries(BOOTSTRAP.map((name) => [name, prior?.[name] ?? null])),
    app_token: remote.app_token || (tokenHidden ? textOf(prior?.app_token) : ""),
    app_version: remote.app_version,
    category: remote.category,
    configured: remote.configured,
    description: remote.description,
    discovery_run_id: prior?.discovery_run_id ?? "",
    discovery_run_status: prior?.discovery_run_status ?? "",
    display_name: remote.display_name,
    id: remote.id,
    installed_at: remote.installed_at,
    mcp_url: remote.mcp_url,
    remote_runners: [...remote.remote_runners],
    status: remote.status,
    updated_at: remote.updated_at,
    workflow_purposes: remote.workflow_purposes.map((p) => ({
      purpose: p.purpose,
      workflow_name: p.workflow_name,
    })),
  });
}

/** The PUT body: each managed attribute that is set; is_default only where given. */
export function putBody(planned: ObjectValue) {
  const body: Record<string, unknown> = {};
  for (const name of MANAGED) {
    const value = planned[name];
    if (value === null || value === undefined) continue;
    if (name === "workflow_assignments" && Array.isArray(value)) {
      body[name] = value.map((item) => {
        const entry = asObject(item) ?? {};
        return {
          purpose: entry.purpose,
          workflow_name: entry.workflow_name,
          ...(typeof entry.is_default === "boolean" ? { is_default: entry.is_default } : {}),
        };
      });
    } else {
      body[name] = value;
    }
  }
  return body;
}

/** What the service's 404 for an app the catalog lacks names (see isGone). */
const GONE = ["app_name"];

const appPath = (name: Value | undefined) => `/api/v1/apps/${encodeURIComponent(textOf(name))}`;

/**
 * Whether the service hides app_token from the provider's key. It shows the token only to keys with
 * apps_write and every scope the token holds, and to those only while the token works. It answers
 * null for a token hidden from the key; a service that leaves the field out for a key without
 * apps_write is asked (GET /api/v1/me) too: for a key with apps_write a missing token is a revoked one.
 */
async function tokenHiddenFrom(remote: Installation, client: Client): Promise<boolean> {
  if (remote.app_token === null) return true;
  try {
    const caller = await client.request<{ scopes: string[] }>("GET", "/api/v1/me", {
      shape: { scopes: ["string"] },
    });
    return !caller.scopes.includes("apps_write");
  } catch (thrown) {
    throw apiDiagnostic(thrown, "Cannot read the scopes of the API key (GET /api/v1/me)", []);
  }
}

/**
 * The state of a configured installation the service answered, telling a token hidden from the key
 * (state keeps the one it has) from a revoked one (state empties it, so whatever uses it sees the
 * change, and a warning says how to get another: applying does not issue one, a rotation does).
 */
async function installedState(
  remote: Installation,
  prior: ObjectValue | null,
  ctx: ResourceContext,
  importing = false,
): Promise<ObjectValue> {
  if (remote.app_token || !remote.configured) return stateOf(remote, prior, { importing });
  const tokenHidden = await tokenHiddenFrom(remote, ctx.client());
  if (!tokenHidden) {
    const rotate = `POST ${appPath(remote.app_name)}/token/rotate?orgId=${textOf(ctx.settings.workspaceId)}`;
    ctx.warn(
      warning(
        `The app token of "${remote.app_name}" was revoked`,
        `The service shows no app_token to this key, which holds apps_write: the token was revoked (in /api/v1/keys) and the app cannot authenticate, so app_token is empty in state. Applying does not issue another; ${rotate} with a key holding apps_write does, and the next refresh records it.`,
      ),
    );
  } else if (importing) {
    ctx.warn(
      warning(
        "The app token is hidden from this API key",
        "The key lacks apps_write or a scope the app token holds, so the service does not show app_token: it stays empty until a refresh with a key that has them.",
      ),
    );
  }
  return stateOf(remote, prior, { importing, tokenHidden });
}

/** Polls GET /api/setup up to discovery_setup_wait_attempts times for observability_ready. */
async function waitForObservability(client: Client, planned: ObjectValue, ctx: ResourceContext) {
  const attempts =
    typeof planned.discovery_setup_wait_attempts === "number"
      ? planned.discovery_setup_wait_attempts
      : DISCOVERY_DEFAULTS.setupWaitAttempts;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const setup = await client.request<{ observability_ready: boolean; missing?: string[] }>(
      "GET",
      "/api/setup",
      { shape: { observability_ready: "boolean", "missing?": ["string"] } },
    );
    if (setup.observability_ready) break;
    if (attempt === attempts) {
      ctx.warn(
        warning(
          "Observability is not ready; discovery starts anyway",
          `GET /api/setup still reports observability_ready false after ${attempts} polls (missing: ${(setup.missing ?? []).join(", ") || "nothing named"}).`,
          ["discovery_setup_wait_attempts"],
        ),
      );
    } else {
      await client.pause(SETUP_POLL_INTERVAL_MS, "GET /api/setup");
    }
  }
}

/** Polls the run until it is no longer running or `timeoutSeconds` have passed. */
async function followRun(client: Client, started: DiscoveryRun, timeoutSeconds: number) {
  const path = `/app/sre/api/discovery/runs/${encodeURIComponent(started.id)}`;
  const deadline = Date.now() + timeoutSeconds * 1000;
  let run = started;
  while (run.status === "running" && Date.now() < deadline) {
    await client.pause(RUN_POLL_INTERVAL_MS, `GET ${path}`);
    run = await client.request<DiscoveryRun>("GET", path, { shape: DISCOVERY_RUN });
  }
  return run;
}

/** A failure as one line of text for a warning: each diagnostic's detail, or its summary. */
const failureText = (thrown: unknown) =>
  diagnosticsOf(thrown)
    .map((diagnostic) => diagnostic.detail || diagnostic.summary)
    .join(" ");

/** Waits for observability, starts discovery and follows it; answers the run's id and status. */
async function bootstrapDiscovery(client: Client, planned: ObjectValue, ctx: ResourceContext) {
  const skipIfExists = planned.discovery_skip_if_exists === true;
  // A run the service will skip needs no observability: no wait, and no warning that it is missing.
  const runExists =
    skipIfExists &&
    (
      await client.request<DiscoveryRun[]>("GET", "/app/sre/api/discovery/runs", {
        query: { limit: "1" },
        shape: [DISCOVERY_RUN],
      })
    ).length > 0;
  if (!runExists) await waitForObservability(client, planned, ctx);
  const started = await client.request<DiscoveryRun>("POST", "/app/sre/api/discovery/runs", {
    body: { skip_if_exists: skipIfExists },
    shape: DISCOVERY_RUN,
  });
  if (started.status === "skipped") return { id: "", status: "skipped" };
  const timeout =
    typeof planned.discovery_poll_timeout_seconds === "number"
      ? planned.discovery_poll_timeout_seconds
      : DISCOVERY_DEFAULTS.pollTimeoutSeconds;
  let run: DiscoveryRun;
  try {
    run = await followRun(client, started, timeout);
  } catch (thrown) {
    if (!client.stopped) throw thrown;
    // The run goes on in the service; state records it as running, like a wait that ran out.
    ctx.warn(
      warning(
        "Stopped waiting for discovery",
        `${failureText(thrown)} Discovery run ${started.id} goes on in the service: GET /app/sre/api/discovery/runs/${started.id} shows how it ends.`,
        ["bootstrap_discovery"],
      ),
    );
    return { id: started.id, status: "running" };
  }
  if (run.status === "running") {
    ctx.warn(
      warning("Discovery still running", `Run ${run.id} did not finish within ${timeout} s.`, [
        "discovery_poll_timeout_seconds",
      ]),
    );
  } else if (run.status === "failed") {
    ctx.warn(
      warning("Discovery failed", `Run ${run.id}: ${run.error ?? "no reason given"}.`, [
        "bootstrap_discovery",
      ]),
    );
  }
  return { id: run.id, status: run.status };
}

export const appResource: Resource = {
  typeName: "svc_app",
  schema,
  validate,

  async checkReplacement(planned, _prior, ctx) {
    if (typeof planned.app_name !== "string") return [];
    const unknownApp = await catalogLacks(ctx.client(), planned.app_name);
    return unknownApp ? [unknownApp] : [];
  },

  plan({ prior, proposed, config }) {
    const diagnostics = validate(config);
    const planned: ObjectValue = { ...proposed };
    const requiresReplace = prior && !sameValue(prior.app_name, planned.app_name) ? [["app_name"]] : [];
    const bootstrap =
      planned.bootstrap_discovery === UNKNOWN ? UNKNOWN : planned.bootstrap_discovery === true;
    let discovers: boolean;
    if (!prior || requiresReplace.length > 0) {
      for (const name of COMPUTED) planned[name] = UNKNOWN;
      discovers = true;
    } else {
      const binds = bindingChanges(prior, planned);
      if (binds) for (const name of CHANGED_BY_UPDATE) planned[name] = UNKNOWN;
      discovers = binds || (prior.bootstrap_discovery !== true && bootstrap !== false);
    }
    // Discovery runs on each apply that creates or changes the binding, or turns bootstrap on. The
    // other bootstrap attributes only tune that run: changed alone, they change state only.
    if (bootstrap === false) {
      planned.discovery_run_id = "";
      planned.discovery_run_status = "";
    } else if (discovers) {
      planned.discovery_run_id = UNKNOWN;
      planned.discovery_run_status = UNKNOWN;
    }
    return { planned, requiresReplace, diagnostics };
  },

  async apply({ prior, planned, ctx }) {
    const client = ctx.client();
    if (!planned) {
      if (!prior) return null;
      try {
        await client.request("DELETE", appPath(prior.app_name));
      } catch (thrown) {
        if (!isGone(thrown, GONE)) {
          throw apiDiagnostic(
            thrown,
            `Cannot remove the binding of app "${textOf(prior.app_name)}"`,
            ATTRIBUTES,
          );
        }
      }
      return null;
    }
    let state: ObjectValue = { ...planned };
    if (!prior || bindingChanges(prior, planned)) {
      let remote: Installation;
      try {
        remote = await client.request<Installation>("PUT", appPath(planned.app_name), {
          body: putBody(planned),
          shape: INSTALLATION,
        });
      } catch (thrown) {
        throw apiDiagnostic(thrown, `Cannot bind app "${textOf(planned.app_name)}"`, ATTRIBUTES);
      }
      state = await installedState(remote, planned, ctx);
    }
    // The plan leaves the run unknown when this apply runs discovery (see plan).
    if (planned.discovery_run_id !== UNKNOWN) return state;
    if (planned.bootstrap_discovery === true) {
      try {
        const run = await bootstrapDiscovery(client, planned, ctx);
        state.discovery_run_id = run.id;
        state.discovery_run_status = run.status;
      } catch (thrown) {
        // The binding exists: keep it in state and report the discovery failure.
        state.discovery_run_id = "";
        state.discovery_run_status = "failed";
        ctx.warn(
          warning("Discovery could not run", failureText(apiDiagnostic(thrown, "Discovery", [])), [
            "bootstrap_discovery",
          ]),
        );
      }
    } else {
      state.discovery_run_id = "";
      state.discovery_run_status = "";
    }
    return state;
  },

  async read(state, ctx) {
    try {
      const remote = await ctx
        .client()
        .request<Installation>("GET", appPath(state.app_name), { shape: INSTALLATION });
      // The shape is checked: configured is the service's own false, not a field missing.
      return remote.configured ? await installedState(remote, state, ctx) : null;
    } catch (thrown) {
      if (isGone(thrown, GONE)) return null;
      throw apiDiagnostic(thrown, `Cannot read app "${textOf(state.app_name)}"`, ATTRIBUTES);
    }
  },

  async importState(id, ctx) {
    let remote: Installation;
    try {
      remote = await ctx.client().request<Installation>("GET", appPath(id), { shape: INSTALLATION });
    } catch (thrown) {
      if (isGone(thrown, GONE)) {
        throw new DiagnosticError([error("Cannot import: unknown app", `The catalog has no app "${id}".`)]);
      }
      throw apiDiagnostic(thrown, `Cannot read app "${id}"`, ATTRIBUTES);
    }
    if (!remote.configured) {
      throw new DiagnosticError([
        error(
          "Cannot import: app not configured",
          `App "${id}" is not configured in this workspace; nothing to import.`,
        ),
      ]);
    }
    return installedState(remote, null, ctx, true);
  },
};
