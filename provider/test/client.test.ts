// The provider facing a service_url that is not a working Vigil, through its protocol handlers and
// its client over real HTTP on loopback: a login page answering 200 text/html to everything (an SSO
// proxy), a JSON service that is not Vigil, and a listener that never answers. Such an answer is an
// error that keeps state, never a resource read as deleted or as nulls; a request waits at most its
// timeout, and StopProvider ends what is in flight. Also service_url with credentials.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, withoutCredentials } from "../src/client.ts";
import { DiagnosticError } from "../src/diagnostics.ts";
import { createProvider, type ProviderHandlers } from "../src/provider.ts";
import { fullObject } from "../src/resource.ts";
import { alertWebhookResource } from "../src/resources/alert-webhook.ts";
import { appResource } from "../src/resources/app.ts";
import { resolveSettings } from "../src/settings.ts";
import { decodeValue, encodeValue, type ObjectValue, type Value } from "../src/values.ts";
import { resourcesOf } from "../src/versions.ts";
import { loginPage, type StandIn, silentListener, standIn } from "./stand-ins.ts";

const WORKSPACE = "6f1c1f8e-8a57-4a39-9d7b-6f0d5d1f2a10";

const dynamic = (value: Value) => ({ msgpack: encodeValue(value) });

/** Calls one RPC handler of the provider, as the gRPC server does. */
function rpc(provider: ProviderHandlers, method: string, request: Record<string, unknown>) {
  const handler = provider[method];
  if (!handler) throw new Error(`the provider has no ${method} handler`);
  return handler(request);
}

/** Provider handlers configured with `serviceUrl`. */
async function providerFor(serviceUrl: string): Promise<ProviderHandlers> {
  const provider = createProvider(resourcesOf("0.1.27"));
  const configured = await rpc(provider, "ConfigureProvider", {
    config: dynamic({ workspace_id: WORKSPACE, service_url: serviceUrl, api_key: "key" }),
  });
  expect(configured.diagnostics).toEqual([]);
  return provider;
}

const appState = fullObject(appResource.schema, {
  app_name: "sre",
  id: "0b7c2f7e-6a43-4f0e-9d54-4f3a5c0f9a11",
  configured: true,
  status: "active",
  enabled: true,
  app_token: "secret-token",
});
const webhookState = (serviceUrl: string) =>
  fullObject(alertWebhookResource.schema, {
    source: "alertmanager",
    app_name: "sre",
    integration: "",
    auto_investigate: false,
    classify_mode: "batch",
    classify_batch_window_seconds: 60,
    classify_bucket_by: "storm_scope",
    classify_critical_bypass: true,
    id: "5d0c4a40-4b8a-4a8e-9d0e-0f2f3b6d7c11",
    platform_webhook_id: "5d0c4a40-4b8a-4a8e-9d0e-0f2f3b6d7c11",
    platform_webhook_url: "/webhooks/5d0c4a40?apiKey=abc",
    trigger_url: `${serviceUrl}/platform/webhooks/5d0c4a40?apiKey=abc`,
  });

/** ReadResource of `state`: its diagnostics and the state it answers. */
async function read(provider: ProviderHandlers, typeName: string, state: ObjectValue) {
  const response = await rpc(provider, "ReadResource", {
    type_name: typeName,
    current_state: dynamic(state),
  });
  return {
    diagnostics: response.diagnostics as { severity: string; summary: string; detail: string }[],
    state: decodeValue(response.new_state as { msgpack: Uint8Array }),
  };
}

describe("a login page at service_url (an SSO proxy answering 200 text/html)", () => {
  let login: StandIn;
  let provider: ProviderHandlers;
  beforeAll(async () => {
    login = await loginPage();
    provider = await providerFor(login.url);
  });
  afterAll(() => login?.close());

  it("fails a read of svc_app with a diagnostic naming the URL, and keeps the state", async () => {
    const { diagnostics, state } = await read(provider, "svc_app", appState);
    expect(diagnostics).toEqual([
      expect.objectContaining({
        severity: "ERROR",
        summary: `Unexpected answer from the service at ${login.url}`,
        detail:
          "GET /api/v1/apps/sre answered 200 with text/html, not Vigil's JSON. Is service_url the Vigil server, not a proxy or a login page in front of it?",
      }),
    ]);
    expect(state).toEqual(appState);
  });

  it("fails a read of svc_sre_alert_webhook the same way, keeping every attribute", async () => {
    const before = webhookState(login.url);
    const { diagnostics, state } = await read(provider, "svc_sre_alert_webhook", before);
    expect(diagnostics.map((d) => [d.summary, d.detail])).toEqual([
      [
        `Unexpected answer from the service at ${login.url}`,
        `GET /app/sre/api/v1/alerts/webhook/${String(before.id)} answered 200 with text/html, not Vigil's JSON. Is service_url the Vigil server, not a proxy or a login page in front of it?`,
      ],
    ]);
    expect(state).toEqual(before);
  });

  it("fails an apply that would take the page for the service's answer, keeping the prior state", async () => {
    const response = await rpc(provider, "ApplyResourceChange", {
      type_name: "svc_app",
      prior_state: dynamic(null),
      planned_state: dynamic({ ...appState, integrations: ["prom"] }),
      config: dynamic({ ...appState, integrations: ["prom"] }),
    });
    expect((response.diagnostics as { summary: string }[]).map((d) => d.summary)).toEqual([
      `Unexpected answer from the service at ${login.url}`,
    ]);
    expect(decodeValue(response.new_state as { msgpack: Uint8Array })).toBeNull();
  });
});

describe("a JSON service at service_url that is not Vigil", () => {
  let other: StandIn;
  let provider: ProviderHandlers;
  beforeAll(async () => {
    other = await standIn({
      status: 200,
      type: "application/json; charset=utf-8",
      body: JSON.stringify({ app_name: "sre", ok: true }),
    });
    provider = await providerFor(other.url);
  });
  afterAll(() => other?.close());

  it("reads an answer without configured as an error naming what is missing, not as an app gone", async () => {
    const { diagnostics, state } = await read(provider, "svc_app", appState);
    expect(diagnostics.map((d) => [d.summary, d.detail])).toEqual([
      [
        `Unexpected answer from the service at ${other.url}`,
        "GET /api/v1/apps/sre answered 200 with JSON that is not Vigil's: id is missing, configured is missing, status is missing, installed_at is missing, updated_at is missing and 12 more. Is service_url the Vigil server, not a proxy or a login page in front of it?",
      ],
    ]);
    expect(state).toEqual(appState);
  });

  it("reads a registration without its fields as an error, not as nulls", async () => {
    const before = webhookState(other.url);
    const { diagnostics, state } = await read(provider, "svc_sre_alert_webhook", before);
    expect(diagnostics[0]?.detail).toContain("answered 200 with JSON that is not Vigil's: id is missing");
    expect(state).toEqual(before);
  });

  it("refuses a list of registrations that is no list when planning a replacement", async () => {
    const prior = webhookState(other.url);
    const proposed = { ...prior, source: "grafana" };
    const response = await rpc(provider, "PlanResourceChange", {
      type_name: "svc_sre_alert_webhook",
      prior_state: dynamic(prior),
      proposed_new_state: dynamic(proposed),
      config: dynamic({ ...proposed, id: null, platform_webhook_id: null }),
    });
    expect((response.diagnostics as { detail: string }[]).map((d) => d.detail)).toEqual([
      "GET /app/sre/api/v1/alerts/webhook answered 200 with JSON that is not Vigil's: the body must be a list. Is service_url the Vigil server, not a proxy or a login page in front of it?",
    ]);
  });
});

describe("a service that never answers", () => {
  let silent: StandIn;
  beforeAll(async () => {
    silent = await silentListener();
  });
  afterAll(() => silent?.close());

  it("fails a request after the timeout, naming the service and the timeout", async () => {
    const client = new Client(silent.url, WORKSPACE, null, { timeoutMs: 200 });
    const failure = await client.request("GET", "/api/v1/apps/sre").catch((thrown: unknown) => thrown);
    expect(failure).toBeInstanceOf(DiagnosticError);
    expect((failure as DiagnosticError).diagnostics).toEqual([
      expect.objectContaining({
        summary: `No answer from the service at ${silent.url}`,
        detail:
          "GET /api/v1/apps/sre got no answer within 0.2 s, the longest the provider waits for one request. Check that service_url is the address of a running Vigil.",
      }),
    ]);
  });

  it("ends a read in flight at StopProvider, keeps the state, and sends nothing after", async () => {
    const provider = await providerFor(silent.url);
    const before = silent.requests.length;
    const reading = read(provider, "svc_app", appState);
    await silent.received(before + 1);
    expect(await rpc(provider, "StopProvider", {})).toEqual({ Error: "" });
    const { diagnostics, state } = await reading;
    expect(diagnostics.map((d) => [d.summary, d.detail])).toEqual([
      [
        "The run was stopped",
        `OpenTofu asked the provider to stop (for example on Ctrl-C) while GET /api/v1/apps/sre was waiting for the service at ${silent.url}; the provider sends no more requests in this run.`,
      ],
    ]);
    expect(state).toEqual(appState);
    const again = await read(provider, "svc_app", appState);
    expect(again.diagnostics.map((d) => d.summary)).toEqual(["The run was stopped"]);
    expect(silent.requests.length).toBe(before + 1);
  });

  it("ends a pause between polls at once when stopped", async () => {
    const stop = new AbortController();
    const client = new Client(silent.url, WORKSPACE, null, { stopSignal: stop.signal });
    const waiting = client.pause(3_600_000, "GET /api/setup").catch((thrown: unknown) => thrown);
    stop.abort();
    const failure = (await waiting) as DiagnosticError;
    expect(failure.diagnostics[0]?.detail).toBe(
      "OpenTofu asked the provider to stop (for example on Ctrl-C) while the provider was waiting to send GET /api/setup; the provider sends no more requests in this run.",
    );
  });
});

describe("service_url with credentials", () => {
  const withPassword = "http://admin:s3cr3tpass@127.0.0.1:19100";

  it("is refused on its line without showing the password", async () => {
    const provider = createProvider(resourcesOf("0.1.27"));
    const response = await rpc(provider, "ValidateProviderConfig", {
      config: dynamic({ workspace_id: WORKSPACE, service_url: withPassword, api_key: null }),
    });
    expect(response.diagnostics).toEqual([
      expect.objectContaining({
        severity: "ERROR",
        summary: "Invalid service_url",
        detail: "service_url must not carry credentials; set api_key (or SVC_API_KEY) instead.",
        attribute: { steps: [{ attribute_name: "service_url" }] },
      }),
    ]);
    const invalid = await rpc(provider, "ValidateProviderConfig", {
      config: dynamic({ workspace_id: WORKSPACE, service_url: "ftp://admin:s3cr3tpass@host", api_key: null }),
    });
    expect(JSON.stringify(invalid.diagnostics)).not.toContain("s3cr3tpass");
    expect((invalid.diagnostics as { summary: string }[]).map((d) => d.summary)).toEqual([
      "Invalid service_url",
    ]);
  });

  it("is refused from SVC_SERVICE_URL too", () => {
    const config = { workspace_id: WORKSPACE, service_url: null, api_key: null };
    const failure = (() => {
      try {
        resolveSettings(config, { SVC_SERVICE_URL: withPassword });
      } catch (thrown) {
        return thrown as DiagnosticError;
      }
    })();
    expect(failure?.diagnostics).toEqual([
      expect.objectContaining({
        summary: "Invalid SVC_SERVICE_URL",
        detail: "SVC_SERVICE_URL must not carry credentials; set SVC_API_KEY (or api_key) instead.",
        path: ["service_url"],
      }),
    ]);
  });

  it("never shows in a diagnostic of the client", async () => {
    const client = new Client(withPassword, WORKSPACE, null);
    const failure = (await client
      .request("GET", "/api/v1/me")
      .catch((thrown: unknown) => thrown)) as DiagnosticError;
    expect(failure.diagnostics[0]?.summary).toBe("Cannot reach the service at http://127.0.0.1:19100");
    expect(JSON.stringify(failure.diagnostics)).not.toContain("s3cr3tpass");
    for (const written of [
      withPassword,
      "http:/admin:s3cr3tpass@host",
      "http://a:s3cr3tpass@b@host/x",
      "admin:s3cr3tpass@host",
    ]) {
      expect(withoutCredentials(written)).not.toContain("s3cr3tpass");
    }
    expect(withoutCredentials("https://vigil.example.com/base")).toBe("https://vigil.example.com/base");
  });
});
