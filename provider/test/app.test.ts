// svc_app's rules that need no service: plan-time validation, what a plan leaves unknown, the PUT
// body's omitted-versus-empty semantics and which attributes state reads back. Its OpenTofu
// end-to-end test is provider/test/app.e2e.test.ts.
import { describe, expect, it } from "vitest";
import { DiagnosticError } from "../src/diagnostics.ts";
import type { ResourceContext } from "../src/resource.ts";
import { appResource, type Installation, putBody, stateOf } from "../src/resources/app.ts";
import { type ObjectValue, UNKNOWN, type Value } from "../src/values.ts";

const ctx: ResourceContext = {
  settings: {
    workspaceId: "6f1c1f8e-8a57-4a39-9d7b-6f0d5d1f2a10",
    serviceUrl: "http://127.0.0.1:9",
    apiKey: null,
  },
  client: () => {
    throw new DiagnosticError([]);
  },
  warn: () => {},
};

const empty = (): ObjectValue =>
  Object.fromEntries(Object.keys(appResource.schema.attributes).map((name) => [name, null]));
const configOf = (values: ObjectValue) => ({ ...empty(), ...values });

const remote: Installation = {
  app_name: "sre",
  id: "0b7c2f7e-6a43-4f0e-9d54-4f3a5c0f9a11",
  configured: true,
  status: "active",
  installed_at: "2026-11-26T00:00:00.000Z",
  updated_at: "2026-11-26T00:00:00.000Z",
  app_version: "0.1.0",
  category: "observability",
  description: "SRE",
  display_name: "SRE",
  mcp_url: "",
  remote_runners: [],
  workflow_purposes: [{ purpose: "alert_triage", workflow_name: "sre-triage" }],
  integrations: ["prom", "grafana"],
  attached_workflows: ["legacy"],
  workflow_assignments: [{ purpose: "alert_triage", workflow_name: "triage-v2", is_default: false }],
  config: { region: "eu" },
  enabled: true,
  app_token: "secret-token",
};

describe("svc_app validation", () => {
  it("names the attribute of each problem", () => {
    const diagnostics = appResource.validate(
      configOf({
        app_name: "SRE!",
        integrations: ["a", "a"],
        discovery_setup_wait_attempts: -1,
        discovery_poll_timeout_seconds: 0,
        workflow_assignments: [
          { purpose: "p", workflow_name: "w1", is_default: true },
          { purpose: "p", workflow_name: "w2", is_default: true },
        ],
      }),
    );
    expect(diagnostics.map((d) => d.path)).toEqual([
      ["app_name"],
      ["discovery_poll_timeout_seconds"],
      ["discovery_setup_wait_attempts"],
      ["workflow_assignments"],
      ["integrations", 1],
    ]);
  });

  it("wants whole numbers in range, also those OpenTofu sends as strings because no float64 holds them", () => {
    const problems = (values: ObjectValue) =>
      appResource.validate(configOf({ app_name: "sre", ...values })).map((d) => d.detail);
    expect(problems({ discovery_poll_timeout_seconds: 0.5 })).toEqual([
      "discovery_poll_timeout_seconds must be a whole number of seconds from 1 to 3600; got 0.5.",
    ]);
    expect(problems({ discovery_poll_timeout_seconds: "99999999999999999999999" })).toEqual([
      "discovery_poll_timeout_seconds must be a whole number of seconds from 1 to 3600; got 99999999999999999999999.",
    ]);
    expect(problems({ discovery_setup_wait_attempts: `1${"0".repeat(400)}` })).toEqual([
      "discovery_setup_wait_attempts must be a whole number from 0 to 1000; got 100000000000000000000000... (401 characters).",
    ]);
    expect(problems({ discovery_poll_timeout_seconds: 1, discovery_setup_wait_attempts: 0 })).toEqual([]);
    expect(problems({ discovery_poll_timeout_seconds: 3600, discovery_setup_wait_attempts: 1000 })).toEqual(
      [],
    );
  });

  it("accepts unknown values", () => {
    expect(
      appResource.validate(
        configOf({ app_name: UNKNOWN, integrations: UNKNOWN, discovery_setup_wait_attempts: UNKNOWN }),
      ),
    ).toEqual([]);
  });
});

describe("svc_app plans", () => {
  it("leaves every computed attribute unknown on create, and the discovery run empty without bootstrap", () => {
    const config = configOf({ app_name: "sre", integrations: ["prom"] });
    const { planned, requiresReplace } = appResource.plan({ prior: null, proposed: config, config, ctx });
    expect(requiresReplace).toEqual([]);
    expect(planned).toMatchObject({
      app_token: UNKNOWN,
      id: UNKNOWN,
      updated_at: UNKNOWN,
      discovery_run_id: "",
    });
    expect(planned.integrations).toEqual(["prom"]);
    const bootstrapped = configOf({ app_name: "sre", bootstrap_discovery: true });
    const withRun = appResource.plan({
      prior: null,
      proposed: bootstrapped,
      config: bootstrapped,
      ctx,
    }).planned;
    expect(withRun).toMatchObject({ discovery_run_id: UNKNOWN, discovery_run_status: UNKNOWN });
  });

  it("replaces the resource when app_name changes", () => {
    const prior = stateOf(remote, configOf({ app_name: "sre" }));
    const config = configOf({ app_name: "other" });
    const proposed = { ...prior, app_name: "other" };
    const { planned, requiresReplace } = appResource.plan({ prior, proposed, config, ctx });
    expect(requiresReplace).toEqual([["app_name"]]);
    expect(planned.id).toBe(UNKNOWN);
  });

  it("keeps the prior computed values when nothing changes, and marks updated_at unknown when something does", () => {
    const prior = stateOf(remote, configOf({ app_name: "sre", integrations: ["prom", "grafana"] }));
    const same = appResource.plan({
      prior,
      proposed: prior,
      config: configOf({ app_name: "sre" }),
      ctx,
    }).planned;
    expect(same).toEqual(prior);
    const changed = { ...prior, integrations: ["prom"] };
    const planned = appResource.plan({ prior, proposed: changed, config: changed, ctx }).planned;
    expect(planned.updated_at).toBe(UNKNOWN);
    expect(planned.id).toBe(remote.id);
    expect(planned.app_token).toBe("secret-token");
  });
});

describe("svc_app discovery plans", () => {
  const bootstrapped = stateOf(
    remote,
    configOf({
      app_name: "sre",
      integrations: ["prom", "grafana"],
      bootstrap_discovery: true,
      discovery_poll_timeout_seconds: 300,
    }),
  );
  const prior = { ...bootstrapped, discovery_run_id: "run-1", discovery_run_status: "succeeded" };
  const planOf = (changes: ObjectValue, from: ObjectValue = prior) => {
    const proposed = { ...from, ...changes };
    return appResource.plan({ prior: from, proposed, config: proposed, ctx }).planned;
  };

  it("plans a change of a discovery tuning attribute alone as a state change, with nothing unknown", () => {
    const tunings: ObjectValue[] = [
      { discovery_poll_timeout_seconds: 60 },
      { discovery_setup_wait_attempts: 5 },
      { discovery_skip_if_exists: true },
    ];
    for (const changes of tunings) {
      expect(planOf(changes)).toEqual({ ...prior, ...changes });
    }
  });

  it("plans a discovery run when the binding changes or bootstrap_discovery turns on, and none when it turns off", () => {
    expect(planOf({ integrations: ["prom"] })).toMatchObject({
      updated_at: UNKNOWN,
      discovery_run_id: UNKNOWN,
      discovery_run_status: UNKNOWN,
    });
    const off = { ...prior, bootstrap_discovery: null, discovery_run_id: "", discovery_run_status: "" };
    expect(planOf({ bootstrap_discovery: true }, off)).toEqual({
      ...off,
      bootstrap_discovery: true,
      discovery_run_id: UNKNOWN,
      discovery_run_status: UNKNOWN,
    });
    expect(planOf({ bootstrap_discovery: false })).toEqual({
      ...prior,
      bootstrap_discovery: false,
      discovery_run_id: "",
      discovery_run_status: "",
    });
  });
});

describe("svc_app requests and state", () => {
  it("sends only what is set: omitted stays unchanged, an empty list clears", () => {
    expect(putBody(configOf({ app_name: "sre", integrations: ["prom"] }))).toEqual({
      integrations: ["prom"],
    });
    expect(
      putBody(
        configOf({
          app_name: "sre",
          attached_workflows: [],
          workflow_assignments: [],
          config: { a: "b" },
          enabled: false,
        }),
      ),
    ).toEqual({ attached_workflows: [], workflow_assignments: [], config: { a: "b" }, enabled: false });
    expect(
      putBody(
        configOf({
          app_name: "sre",
          workflow_assignments: [
            { purpose: "p", workflow_name: "w", is_default: null },
            { purpose: "q", workflow_name: "x", is_default: true },
          ],
        }),
      ),
    ).toEqual({
      workflow_assignments: [
        { purpose: "p", workflow_name: "w" },
        { purpose: "q", workflow_name: "x", is_default: true },
      ],
    });
  });

  it("reads back only the attributes the configuration manages", () => {
    const state = stateOf(remote, configOf({ app_name: "sre", integrations: ["grafana", "prom"] }));
    expect(state.integrations).toEqual(["grafana", "prom"]); // same set: the configured order stays
    expect(state.attached_workflows).toBeNull();
    expect(state.config).toBeNull();
    expect(state.enabled).toBeNull();
    expect(state).toMatchObject({ app_token: "secret-token", configured: true, status: "active" });
    expect(state.workflow_purposes).toEqual([{ purpose: "alert_triage", workflow_name: "sre-triage" }]);
  });

  it("keeps the app token the service hides from a key without apps_write, and empties a revoked one", () => {
    const prior = stateOf(remote, configOf({ app_name: "sre" }));
    const { app_token: _missing, ...withoutToken } = remote;
    expect(stateOf(withoutToken, prior, { tokenHidden: true }).app_token).toBe("secret-token");
    expect(stateOf({ ...remote, app_token: "" }, prior, { tokenHidden: true }).app_token).toBe(
      "secret-token",
    );
    expect(stateOf(withoutToken, prior).app_token).toBe("");
    expect(stateOf({ ...remote, app_token: "rotated" }, prior).app_token).toBe("rotated");
    expect(stateOf(withoutToken, null, { importing: true, tokenHidden: true }).app_token).toBe("");
  });

  it("shows a remote change of a managed attribute as drift", () => {
    const prior = configOf({
      app_name: "sre",
      integrations: ["prom"],
      config: { region: "us" },
      enabled: false,
    });
    const state = stateOf(remote, prior);
    expect(state.integrations).toEqual(["prom", "grafana"]);
    expect(state.config).toEqual({ region: "eu" });
    expect(state.enabled).toBe(true);
  });

  it("keeps is_default null where the configuration left it out, and fills everything on import", () => {
    const prior = configOf({
      app_name: "sre",
      workflow_assignments: [{ purpose: "alert_triage", workflow_name: "triage-v2", is_default: null }],
    });
    expect(stateOf(remote, prior).workflow_assignments).toEqual([
      { purpose: "alert_triage", workflow_name: "triage-v2", is_default: null },
    ]);
    const imported = stateOf(remote, null, { importing: true });
    const managed: Record<string, Value> = {
      integrations: ["prom", "grafana"],
      attached_workflows: ["legacy"],
      config: { region: "eu" },
      enabled: true,
    };
    expect(imported).toMatchObject(managed);
    expect(imported.bootstrap_discovery).toBeNull();
    expect(imported.discovery_run_id).toBe("");
  });
});
