// The real rows the fuzzer aims at, made through the API before it starts: a registration per alert
// source and an agent and a workflow webhook for the deliveries; for the API walk its own
// integration, agent, workflow (an approved version and a draft), named webhook, registration, an
// alert and a finished run, so that paths with names and ids hit rows that exist. Destructive
// operations get a fresh victim each time, so they never take the shared rows away.
import type { FastifyInstance } from "fastify";
import { SOURCE_TYPES, type SourceType } from "../../src/alerts/sources/index.ts";
import { fixtureFiles, readFixture } from "../fixtures.ts";

export type Auth = { authorization: string };

export interface Registration {
  id: string;
  source: SourceType;
  /** /platform/api/v1/webhooks/trigger?apiKey=... */
  triggerPath: string;
  token: string;
}

export interface NamedHook {
  id: string;
  target: "agent" | "workflow";
  token: string;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Sets a body the fixture's source would send its headers with (SNS posts text/plain). */
export function sourceHeaders(source: SourceType, body: string): Record<string, string> {
  if (source !== "cloudwatch") return { "content-type": "application/json" };
  let type = "Notification";
  try {
    type = String((JSON.parse(body) as { Type?: unknown }).Type ?? type);
  } catch {
    // not JSON: the header keeps the default
  }
  return { "content-type": "text/plain; charset=UTF-8", "x-amz-sns-message-type": type };
}

export const INTEGRATION_URL = "http://127.0.0.1:9/";

export class Resources {
  readonly registrations = new Map<SourceType, Registration>();
  deliveryHooks: NamedHook[] = [];
  // The API walk's own rows.
  readonly integration = "fz-int";
  readonly agent = "fz-agent";
  readonly workflow = "fz-flow";
  hookId = "";
  registrationId = "";
  alertId = "";
  investigationId = "";
  draftVersion = 2;
  sessionId = "";
  traceId = "";
  runId = "";
  invocationId = "";
  victimKeyIds: string[] = [];
  private victims = 0;

  constructor(
    private readonly app: () => FastifyInstance,
    readonly auth: Auth,
    private readonly newKeyId: () => Promise<string>,
  ) {}

  async call(method: Method, url: string, payload?: unknown, expected: number[] = [200, 201, 202, 204]) {
    const response = await this.app().inject({ method, url, headers: this.auth, payload: payload as never });
    if (!expected.includes(response.statusCode)) {
      throw new Error(`setup ${method} ${url} answered ${response.statusCode}: ${response.body}`);
    }
    return response;
  }

  private async register(source: SourceType, integration: string): Promise<Registration> {
    const response = await this.call("POST", "/app/sre/api/v1/alerts/webhook", {
      source,
      integration,
      sns_auto_confirm: false,
      auto_investigate: false,
    });
    const body = response.json() as { id: string; platform_webhook_url: string };
    const token = new URL(body.platform_webhook_url, "http://x").searchParams.get("apiKey") ?? "";
    return { id: body.id, source, triggerPath: `/platform${body.platform_webhook_url}`, token };
  }

  private async namedHook(
    name: string,
    target: "agent" | "workflow",
    targetName: string,
  ): Promise<NamedHook> {
    const response = await this.call("POST", "/platform/api/v1/webhooks", {
      name,
      target_type: target,
      target_name: targetName,
    });
    const body = response.json() as { id: string; token: string };
    return { id: body.id, target, token: body.token };
  }

  /** Agent, integration and workflow rows of one set, by prefix. */
  private async automation(prefix: string, integrationUrl: string | null): Promise<void> {
    await this.call("POST", "/api/v1/integrations", {
      name: `${prefix}-int`,
      type: "alertmanager",
      url: integrationUrl,
    });
    await this.call("POST", "/platform/api/v1/agents", {
      name: `${prefix}-agent`,
      kind: "builtin",
      instructions: "looked at {{input.message}}",
      integrations: [`${prefix}-int`],
    });
    await this.call("POST", "/platform/api/v1/workflows", {
      name: `${prefix}-flow`,
      stages: [
        { id: "shape", action_type: "json_transform", config: { expression: "input" } },
        {
          id: "report",
          action_type: "write_report",
          depends_on: ["shape"],
          config: { title: "fuzz", summary: "{{input.message}}" },
        },
      ],
    });
    await this.call("POST", `/platform/api/v1/workflows/${prefix}-flow/versions/1/approve`);
  }

  async create(): Promise<void> {
    for (const source of SOURCE_TYPES) this.registrations.set(source, await this.register(source, "fuzz"));
    // Deliveries: an agent and a workflow behind named webhooks, used by nothing else.
    await this.automation("fz-deliver", null);
    this.deliveryHooks = [
      await this.namedHook("fz-deliver-agent-hook", "agent", "fz-deliver-agent"),
      await this.namedHook("fz-deliver-flow-hook", "workflow", "fz-deliver-flow"),
    ];
    // The API walk's rows.
    await this.automation("fz", INTEGRATION_URL);
    const draft = await this.call("POST", `/platform/api/v1/workflows/${this.workflow}/versions`);
    this.draftVersion = (draft.json() as { draft_version: number }).draft_version;
    const hook = await this.namedHook("fz-hook", "agent", this.agent);
    this.hookId = hook.id;
    this.registrationId = (await this.register("grafana", "fz-api")).id;
    // An alert, from a fixture delivered to a registration of its own.
    const alerts = await this.register("alertmanager", "fz-api-alerts");
    const fixture = readFixture("alertmanager", fixtureFiles("alertmanager")[0] as string);
    const delivered = await this.app().inject({
      method: "POST",
      url: alerts.triggerPath,
      headers: { "content-type": "application/json" },
      payload: fixture,
    });
    const accepted = delivered.json() as { alerts?: { id: string }[] };
    this.alertId = accepted.alerts?.[0]?.id ?? "";
    if (delivered.statusCode !== 202 || !this.alertId) throw new Error(`setup delivery: ${delivered.body}`);
    // Its investigation.
    const investigated = await this.app().inject({
      method: "POST",
      url: `/app/sre/api/v1/alerts/${this.alertId}/investigate`,
      headers: this.auth,
    });
    this.investigationId =
      (investigated.json() as { investigation?: { id: string } }).investigation?.id ?? "";
    if (!this.investigationId) throw new Error(`setup investigation: ${investigated.body}`);
    // A run: the workflow behind the delivery webhook, started once.
    const flowHook = this.deliveryHooks[1] as NamedHook;
    const run = await this.app().inject({
      method: "POST",
      url: `/platform/api/v1/webhooks/trigger?apiKey=${flowHook.token}`,
      headers: { "content-type": "application/json" },
      payload: { message: "setup run" },
    });
    if (run.statusCode !== 202) throw new Error(`setup run: ${run.body}`);
    const started = run.json() as {
      session_id: string;
      trace_id: string;
      run_id: string;
      invocation_id: string;
    };
    this.sessionId = started.session_id;
    this.traceId = started.trace_id;
    this.runId = started.run_id;
    this.invocationId = started.invocation_id;
    this.runHookId = flowHook.id;
  }

  /** The named webhook whose run the API walk reads (the delivery workflow's). */
  runHookId = "";

  /** Puts back the API walk's rows a successful update or delete may have renamed or removed. */
  async ensure(): Promise<void> {
    const missing = async (url: string) =>
      (await this.app().inject({ method: "GET", url, headers: this.auth })).statusCode === 404;
    if (await missing(`/api/v1/integrations/${this.integration}`)) {
      await this.call("POST", "/api/v1/integrations", {
        name: this.integration,
        type: "alertmanager",
        url: INTEGRATION_URL,
      });
    }
    if (await missing(`/platform/api/v1/agents/${this.agent}`)) {
      await this.call("POST", "/platform/api/v1/agents", {
        name: this.agent,
        kind: "builtin",
        integrations: [this.integration],
      });
    }
    if (await missing(`/platform/api/v1/workflows/${this.workflow}`)) {
      await this.call("POST", "/platform/api/v1/workflows", {
        name: this.workflow,
        stages: [{ id: "report", action_type: "write_report", config: {} }],
      });
      const draft = await this.call("POST", `/platform/api/v1/workflows/${this.workflow}/versions`);
      this.draftVersion = (draft.json() as { draft_version: number }).draft_version;
    }
    if (await missing(`/platform/api/v1/webhooks/${this.hookId}`)) {
      this.hookId = (
        await this.namedHook(`fz-hook-${++this.victims}`, "agent", this.agent).catch(() =>
          this.namedHook(`fz-hook-${++this.victims}`, "agent", this.agent),
        )
      ).id;
    }
    if (await missing(`/app/sre/api/v1/alerts/webhook/${this.registrationId}`)) {
      this.registrationId = (await this.register("grafana", `fz-api-${++this.victims}`)).id;
    }
  }

  /** A new row for a destructive operation to remove: its name or id. */
  async victim(
    kind: "integration" | "agent" | "workflow" | "webhook" | "registration" | "key",
  ): Promise<string> {
    this.victims += 1;
    const name = `fz-victim-${this.victims}`;
    switch (kind) {
      case "integration":
        await this.call("POST", "/api/v1/integrations", { name, type: "grafana" });
        return name;
      case "agent":
        await this.call("POST", "/platform/api/v1/agents", { name, kind: "builtin" });
        return name;
      case "workflow":
        await this.call("POST", "/platform/api/v1/workflows", { name });
        return name;
      case "webhook":
        return (await this.namedHook(name, "agent", this.agent)).id;
      case "registration":
        return (await this.register("datadog", name)).id;
      case "key": {
        const id = await this.newKeyId();
        this.victimKeyIds.push(id);
        return id;
      }
    }
  }
}
