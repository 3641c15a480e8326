// The MCP server over real HTTP: the SDK's own client and Streamable HTTP transport against a
// listening Vigil on loopback, authenticated with the app token (and API keys for scopes and tenants).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { beforeAll, expect, it } from "vitest";
import { poll } from "../../test/alertmanager-process.ts";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../test/alerts.ts";
import { createApprovedWorkflow } from "../../test/automation-runs.ts";
import { type Auth, call, describeEachEngine, listenOnLoopback, waitFor } from "../../test/harness.ts";
import { MCP_RAW_PAYLOAD_CHARS, MCP_TOOLS } from "./tools.ts";

type ToolResult = { content: { type: string; text: string }[]; isError?: boolean };

const PAYMENTS = { cluster: "prod-eu-west-1", env: "production", namespace: "payments" };
const now = Date.now();
const at = (minutes: number) => new Date(now - minutes * 60_000).toISOString();

describeEachEngine("MCP server", (harness) => {
  let base = "";
  let auth: Auth;
  let key = "";
  let appToken = "";
  let ids: string[] = [];

  async function connect(token: string, query = ""): Promise<Client> {
    const client = new Client({ name: "vigil-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/app/sre/mcp${query}`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    return client;
  }

  const textOf = (result: unknown) => (result as ToolResult).content[0]?.text ?? "";

  beforeAll(async () => {
    const h = harness();
    base = await listenOnLoopback(h.vigil);
    ({ auth, key } = await h.createKey());
    const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: "prod" });
    ids = await deliverIds(
      h,
      trigger,
      amBody([
        {
          status: "firing",
          fingerprint: "a000000000000001",
          startsAt: at(3),
          labels: { alertname: "PostgreSQLDown", ...PAYMENTS, service: "payments-db", severity: "critical" },
        },
        {
          status: "firing",
          fingerprint: "a000000000000002",
          startsAt: at(2),
          labels: { alertname: "HighErrorRate", ...PAYMENTS, service: "payments-api", severity: "warning" },
        },
      ]),
    );
    const installed = await call(h, auth, "GET", "/api/v1/apps/sre");
    appToken = installed.json().app_token;
    expect(appToken).toMatch(/^vga_/);
    await poll("the two alerts to form a storm", async () => {
      const alert = await readAlert(h, auth, ids[0] as string);
      return alert.storm_id ? alert : undefined;
    });
  });

  it("lists its tools, with listAlerts' filters as the list tool's input schema", async () => {
    const client = await connect(appToken);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      "list_alerts",
      "get_alert",
      "get_alert_history",
      "get_alert_storm",
      "investigate_alert",
      "get_investigation",
      "list_investigations",
      "list_sessions",
      "ask",
      "get_execution",
    ]);
    const list = tools[0];
    expect(Object.keys(list?.inputSchema.properties ?? {})).toEqual([
      "status",
      "attention",
      "source_type",
      "integration_names",
      "storm_id",
      "q",
      "signal_severity",
      "alert_role",
      "sort_by",
      "page",
      "page_size",
      "include_raw_payload",
    ]);
    expect(list?.description).toContain("scope sre_alerts_read");
    const inputOf = (name: string) =>
      Object.keys(tools.find((tool) => tool.name === name)?.inputSchema.properties ?? {});
    expect(inputOf("investigate_alert")).toEqual([
      "alert_id",
      "force_new",
      "remediation_requested",
      "operator_message",
    ]);
    expect(inputOf("list_investigations")).toEqual(["status", "alert_id", "page", "page_size"]);
    expect(inputOf("list_sessions")).toEqual(["q", "source_app", "limit", "offset"]);
    expect(inputOf("ask")).toEqual(["message", "inputs", "session_id", "candidate_type"]);
    // What has a default is the caller's to leave out; what has none and is not optional, not.
    const requiredOf = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema.required;
    expect(requiredOf("list_alerts")).toBeUndefined();
    expect(requiredOf("list_investigations")).toBeUndefined();
    expect(requiredOf("list_sessions")).toBeUndefined();
    expect(requiredOf("get_alert")).toEqual(["id"]);
    expect(requiredOf("ask")).toEqual(["message"]);
    await client.close();
  });

  it("answers two tool calls with the app token: the list and an alert's storm", async () => {
    const client = await connect(appToken);
    const listed = JSON.parse(
      textOf(await client.callTool({ name: "list_alerts", arguments: { q: "error" } })),
    );
    expect(listed).toMatchObject({ total: 1, page: 1, page_size: 20, summary: { total_active: 2 } });
    expect(listed.alerts.map((alert: { id: string }) => alert.id)).toEqual([ids[1]]);
    // Lists leave the payloads out unless asked: the alerts of a delivery each repeat its body.
    expect(listed.alerts[0]).not.toHaveProperty("raw_payload");
    const withPayloads = JSON.parse(
      textOf(
        await client.callTool({ name: "list_alerts", arguments: { q: "error", include_raw_payload: true } }),
      ),
    );
    expect(withPayloads.alerts[0].raw_payload).toBe(
      (await readAlert(harness(), auth, ids[1] as string)).raw_payload,
    );
    const storm = JSON.parse(
      textOf(await client.callTool({ name: "get_alert_storm", arguments: { id: ids[0] } })),
    );
    expect(storm).toMatchObject({
      alert_id: ids[0],
      storm_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      total: 2,
    });
    expect(storm.alerts.map((alert: { id: string }) => alert.id).sort()).toEqual([...ids].sort());
    for (const alert of storm.alerts) expect(alert).not.toHaveProperty("raw_payload");
    const history = JSON.parse(
      textOf(await client.callTool({ name: "get_alert_history", arguments: { id: ids[1] } })),
    );
    expect(history.alert_id).toBe(ids[1]);
    expect(history.events[0]).toMatchObject({ seq: 1, kind: "created", actor: "source" });
    await client.close();
  });

  it("cuts a raw_payload over its limit in get_alert, and says so", async () => {
    const h = harness();
    const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: "large" });
    const [id] = await deliverIds(
      h,
      trigger,
      amBody([
        {
          status: "firing",
          fingerprint: "a000000000000009",
          startsAt: at(1),
          labels: { alertname: "LargeBody", severity: "warning" },
          description: "x".repeat(MCP_RAW_PAYLOAD_CHARS),
        },
      ]),
    );
    const full = (await readAlert(h, auth, id as string)).raw_payload as string;
    expect(full.length).toBeGreaterThan(MCP_RAW_PAYLOAD_CHARS);
    const client = await connect(appToken);
    const read = JSON.parse(textOf(await client.callTool({ name: "get_alert", arguments: { id } })));
    expect(read.raw_payload).toBe(full.slice(0, MCP_RAW_PAYLOAD_CHARS));
    expect(read.raw_payload_truncated).toBe(true);
    // One within the limit comes whole, without the flag.
    const small = JSON.parse(textOf(await client.callTool({ name: "get_alert", arguments: { id: ids[0] } })));
    expect(small.raw_payload).toBe((await readAlert(h, auth, ids[0] as string)).raw_payload);
    expect(small).not.toHaveProperty("raw_payload_truncated");
    // An alert in no storm: the storm's answer has the same fields, empty.
    const alone = JSON.parse(textOf(await client.callTool({ name: "get_alert_storm", arguments: { id } })));
    expect(alone).toEqual({ alert_id: id, storm_id: null, total: 0, alerts: [] });
    await client.close();
  });

  it("validates tool input with the HTTP API's schema and answers a foreign tenant's alert as not found", async () => {
    const client = await connect(appToken);
    const bad = (await client.callTool({ name: "list_alerts", arguments: { page_size: 501 } })) as ToolResult;
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^VALIDATION_FAILED: page_size: /);
    const status = (await client.callTool({
      name: "list_alerts",
      arguments: { status: "open" },
    })) as ToolResult;
    expect(textOf(status)).toBe("VALIDATION_FAILED: status: must be one of active, resolved, ignored");
    const unknownField = (await client.callTool({
      name: "get_alert",
      arguments: { id: "x", extra: 1 },
    })) as ToolResult;
    expect(unknownField.isError).toBe(true);
    // An id no external_uid can be, as the HTTP route's path says.
    const long = (await client.callTool({
      name: "get_alert",
      arguments: { id: "x".repeat(129) },
    })) as ToolResult;
    expect(textOf(long)).toMatch(/^VALIDATION_FAILED: id: /);
    await client.close();

    const stranger = await harness().createKey();
    const foreign = await connect(stranger.key);
    const result = (await foreign.callTool({ name: "get_alert", arguments: { id: ids[0] } })) as ToolResult;
    expect(result).toEqual({
      content: [{ type: "text", text: "NOT_FOUND: alert not found" }],
      isError: true,
    });
    const list = JSON.parse(textOf(await foreign.callTool({ name: "list_alerts", arguments: {} })));
    expect(list).toMatchObject({ total: 0, alerts: [] });
    await foreign.close();
  });

  it("counts a text's length in characters, as the HTTP API does, and checks every key of ask's inputs", async () => {
    const h = harness();
    // A fresh caller: its sessions and refusals touch no other test's.
    const caller = await h.createKey();
    const client = await connect(caller.key);
    // Each emoji is one character and two UTF-16 units: 6,000 of them are within message's 10,000.
    const message = "😀".repeat(6_000);
    const http = await call(h, caller.auth, "POST", "/platform/api/v1/platform/ask/start", { message });
    expect(http.statusCode, http.body).toBe(200);
    expect(await jsonOf(client, "ask", { message })).toMatchObject({ decision: http.json().decision });
    const found = await jsonOf(client, "list_sessions", { q: "😀".repeat(150) });
    expect(found.items.map((item: { source_app: string | null }) => item.source_app).sort()).toEqual([
      "mcp",
      null,
    ]);
    const operatorMessage = "😀".repeat(3_000);
    expect(
      textOf(
        await call_(client, "investigate_alert", { alert_id: ids[0], operator_message: operatorMessage }),
      ),
    ).toBe("NOT_FOUND: alert not found");
    expect(textOf(await call_(client, "ask", { message: "😀".repeat(10_001) }))).toBe(
      "VALIDATION_FAILED: message: must NOT have more than 10000 characters",
    );
    // A key with a line break is checked like any other: its value must be text.
    expect(textOf(await call_(client, "ask", { message: "hi", inputs: { "a\nb": { x: [1, 2] } } }))).toBe(
      "VALIDATION_FAILED: inputs.a\nb: must be string",
    );
    expect(textOf(await call_(client, "ask", { message: "hi", inputs: { "x\n": "v".repeat(10_001) } }))).toBe(
      "VALIDATION_FAILED: inputs.x\n: must NOT have more than 10000 characters",
    );
    await client.close();
  });

  it("answers bad requests in JSON-RPC: params as -32602, JSON syntax as -32700, unstorable text as the tool's error", async () => {
    const post = (body: string) =>
      fetch(`${base}/app/sre/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${appToken}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body,
      });
    const badParams = [{ name: "list_alerts", arguments: [1] }, { name: "list_alerts", arguments: "x" }, {}];
    for (const params of [...badParams, undefined]) {
      const response = await post(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params }));
      const answer = await response.json();
      expect(answer, JSON.stringify(params)).toMatchObject({
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32602 },
      });
    }
    const unknown = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 8,
        method: "tools/call",
        params: { name: "nope", arguments: {} },
      }),
    );
    expect(await unknown.json()).toMatchObject({
      jsonrpc: "2.0",
      id: 8,
      error: { code: -32602, message: "Unknown tool: nope" },
    });
    const syntax = await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"');
    expect(syntax.status).toBe(400);
    expect(await syntax.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    // JSON is UTF-8: other bytes are a parse error, not text with U+FFFD in their place.
    const list =
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_alerts","arguments":{"q":"caf\u00e9"}}}';
    for (const [contentType, body, reason] of [
      ["application/json", Buffer.from(list, "latin1"), "not valid UTF-8"],
      ["application/json; charset=latin1", Buffer.from(list, "latin1"), "unsupported charset latin1"],
    ] as const) {
      const refused = await fetch(`${base}/app/sre/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${appToken}`,
          "content-type": contentType,
          accept: "application/json, text/event-stream",
        },
        body,
      });
      expect(refused.status, contentType).toBe(400);
      expect(await refused.json()).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: expect.stringContaining(reason) },
      });
    }
    const utf8 = await post(list);
    expect(utf8.status).toBe(200);
    const answered = (await utf8.json()) as { result: { isError?: boolean } };
    expect(answered).toMatchObject({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text" }] } });
    expect(answered.result.isError).toBeUndefined();

    const client = await connect(appToken);
    // The SDK's client prefixes the code itself: the message reads it once.
    await expect(client.callTool({ name: "nosuch", arguments: {} })).rejects.toThrow(
      expect.objectContaining({ code: -32602, message: "MCP error -32602: Unknown tool: nosuch" }),
    );
    for (const q of ["a\u0000b", "\ud800"]) {
      const refused = await call_(client, "list_alerts", { q });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toBe("VALIDATION_FAILED: q: must not contain U+0000 or unpaired surrogates");
    }
    const ask = await call_(client, "ask", { message: "restart \u0000 payments" });
    expect(textOf(ask)).toMatch(/^VALIDATION_FAILED: message: /);
    await client.close();
  });

  const call_ = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  const jsonOf = async (client: Client, name: string, args: Record<string, unknown>) => {
    const result = await call_(client, name, args);
    expect(result.isError, textOf(result)).toBeFalsy();
    return JSON.parse(textOf(result));
  };

  it("starts an investigation with the app token, polls it until final, and finds its session", async () => {
    const client = await connect(appToken);
    const started = await jsonOf(client, "investigate_alert", {
      alert_id: ids[1],
      operator_message: "look at the error rate",
    });
    const id = started.investigation.id;
    expect(started.investigation).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const again = await jsonOf(client, "investigate_alert", { alert_id: ids[1] });
    expect(again.investigation.id).toBe(id);

    const done = await waitFor(async () => {
      const investigation = await jsonOf(client, "get_investigation", { id });
      return ["completed", "failed", "cancelled"].includes(investigation.status) ? investigation : undefined;
    }, 60_000);
    expect(done).toMatchObject({ id, alert_id: ids[1], status: "completed", parent_investigation_id: null });
    expect(done.triage_metadata).toMatchObject({ trigger: "manual", requested_by: "app:sre" });
    expect(done.finished_at).toEqual(expect.any(String));

    const forked = await jsonOf(client, "investigate_alert", { alert_id: ids[1], force_new: true });
    expect(forked.investigation.id).not.toBe(id);
    const listed = await jsonOf(client, "list_investigations", { alert_id: ids[1], status: "completed" });
    expect(listed).toMatchObject({ page: 1, page_size: 20 });
    expect(listed.investigations.map((item: { id: string }) => item.id)).toContain(id);
    expect(listed.investigations.every((item: { status: string }) => item.status === "completed")).toBe(true);

    const sessions = await jsonOf(client, "list_sessions", { q: done.guild_session_id, limit: 5 });
    expect(sessions).toMatchObject({ limit: 5, offset: 0, has_more: false });
    expect(sessions.items.map((item: { id: string }) => item.id)).toEqual([done.guild_session_id]);
    // Started by the app, not by the person who installed it or last rotated its token.
    expect(sessions.items[0].initiator).toBe("app:sre");
    const later = await jsonOf(client, "list_sessions", { q: done.guild_session_id, offset: 1 });
    expect(later.items).toEqual([]);

    const bad = await call_(client, "investigate_alert", { alert_id: ids[1], force_new: "yes" });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^VALIDATION_FAILED: force_new: /);
    expect(textOf(await call_(client, "get_investigation", { id: "nope" }))).toMatch(
      /^VALIDATION_FAILED: id: /,
    );
    expect(textOf(await call_(client, "list_sessions", { limit: 101 }))).toMatch(
      /^VALIDATION_FAILED: limit: /,
    );
    expect(textOf(await call_(client, "list_investigations", { status: "done" }))).toMatch(
      /^VALIDATION_FAILED: status: /,
    );
    await client.close();

    const stranger = await harness().createKey();
    const foreign = await connect(stranger.key);
    expect(await call_(foreign, "get_investigation", { id })).toEqual({
      content: [{ type: "text", text: "NOT_FOUND: investigation not found" }],
      isError: true,
    });
    expect(textOf(await call_(foreign, "investigate_alert", { alert_id: ids[1] }))).toBe(
      "NOT_FOUND: alert not found",
    );
    expect(await jsonOf(foreign, "list_investigations", {})).toMatchObject({ total: 0, investigations: [] });
    expect((await jsonOf(foreign, "list_sessions", { q: done.guild_session_id })).items).toEqual([]);
    await foreign.close();
  });

  it("asks: a missing input answers inputs_required, then the same session takes it", async () => {
    const h = harness();
    await createApprovedWorkflow(h, auth, {
      name: "restart-deployment",
      description: "Restart a Kubernetes deployment with a rolling restart",
      inputs: [
        { name: "service", required: true, pattern: "^[a-z][a-z0-9-]*$" },
        { name: "cluster", required: true, pattern: "^(prod|staging)-[a-z]+$" },
      ],
      routing_examples: ["restart the checkout deployment in prod-eu", "bounce the payments service"],
      stages: [
        {
          id: "report",
          action_type: "write_report",
          config: { name: "Restart.md", title: "Restart", summary: "restarted", confidence: "high" },
        },
      ],
    });
    const client = await connect(key);
    const first = await jsonOf(client, "ask", {
      message: "restart the payments deployment",
      inputs: { service: "payments" },
      candidate_type: "workflow",
    });
    expect(first).toMatchObject({
      decision: "inputs_required",
      trace_id: "",
      inputs_required: ["cluster"],
      plan: "restart-deployment",
    });
    const answered = await jsonOf(client, "ask", {
      message: "here it is",
      inputs: { cluster: "prod-eu" },
      session_id: first.session_id,
    });
    expect(answered).toMatchObject({
      decision: "continued",
      session_id: first.session_id,
      inputs_required: [],
    });
    expect(answered.trace_id).not.toBe("");
    const mine = await jsonOf(client, "list_sessions", { source_app: "mcp" });
    expect(mine.items.map((item: { id: string }) => item.id)).toEqual([first.session_id]);
    expect(textOf(await call_(client, "ask", { message: "" }))).toMatch(/^VALIDATION_FAILED: message: /);
    expect(textOf(await call_(client, "ask", { message: "hi", source_app: "x" }))).toMatch(
      /^VALIDATION_FAILED/,
    );
    await client.close();

    // The app token runs Ask too: a complete request starts the workflow, in the app's workspace.
    const app = await connect(appToken);
    const asked = await jsonOf(app, "ask", {
      message: "restart the payments deployment",
      inputs: { service: "payments", cluster: "prod-eu" },
      candidate_type: "workflow",
    });
    expect(asked).toMatchObject({
      decision: "routed",
      inputs_required: [],
      plan: "restart-deployment",
    });
    // The run is followed through MCP alone.
    const run = await poll("the run to settle, read with get_execution", async () => {
      const trace = await jsonOf(app, "get_execution", { trace_id: asked.trace_id });
      return trace.execution.trace_settled && trace.execution.status !== "running" ? trace : undefined;
    });
    expect(run.execution).toMatchObject({ status: "completed", session_id: asked.session_id });
    expect(textOf(await call_(app, "get_execution", { trace_id: "nope" }))).toMatch(
      /^VALIDATION_FAILED: trace_id/,
    );
    const sessions = await jsonOf(app, "list_sessions", { source_app: "mcp" });
    expect(sessions.items.map((item: { id: string }) => item.id)).toContain(asked.session_id);
    await app.close();
    const stranger = await h.createKey();
    const foreign = await connect(stranger.key);
    expect(textOf(await call_(foreign, "ask", { message: "hello", session_id: first.session_id }))).toMatch(
      /^NOT_FOUND: /,
    );
    await foreign.close();
  });

  it("gives the app token exactly the scopes of its tools", async () => {
    const keys = (await call(harness(), auth, "GET", "/api/v1/keys")).json();
    const token = keys.find((item: { name: string }) => item.name === "app token: sre");
    expect([...token.scopes].sort()).toEqual([...new Set(MCP_TOOLS.map((tool) => tool.scope))].sort());
  });

  it("enforces each new tool's scope as its HTTP route does", async () => {
    const h = harness();
    const reader = await h.createKey({ scopes: ["sre_investigations_read", "aios_automation_read"] });
    const client = await connect(reader.key);
    const refused = await call_(client, "investigate_alert", { alert_id: ids[0] });
    expect(textOf(refused)).toBe(
      "INSUFFICIENT_SCOPE: this token lacks the scope sre_investigations_write that investigate_alert needs",
    );
    expect((await jsonOf(client, "list_investigations", {})).total).toBe(0);
    expect((await jsonOf(client, "list_sessions", {})).items).toEqual([]);
    await client.close();
    const none = await connect((await h.createKey({ scopes: ["apps_read"] })).key);
    for (const [name, scope] of [
      ["get_investigation", "sre_investigations_read"],
      ["list_investigations", "sre_investigations_read"],
      ["list_sessions", "aios_automation_read"],
      ["get_execution", "aios_automation_read"],
    ]) {
      expect(textOf(await call_(none, name as string, {}))).toBe(
        `INSUFFICIENT_SCOPE: this token lacks the scope ${scope} that ${name} needs`,
      );
    }
    await none.close();
  });

  it("refuses a tool whose scope the key lacks, and a request without a valid key", async () => {
    const h = harness();
    const limited = await h.createKey({ scopes: ["apps_read"] });
    const client = await connect(limited.key);
    const refused = (await client.callTool({ name: "get_alert", arguments: { id: ids[0] } })) as ToolResult;
    expect(refused).toEqual({
      content: [
        {
          type: "text",
          text: "INSUFFICIENT_SCOPE: this token lacks the scope sre_alerts_read that get_alert needs",
        },
      ],
      isError: true,
    });
    await client.close();
    await expect(connect("vgl_not-a-real-key-0000000000")).rejects.toThrow(/UNAUTHENTICATED/);
    // A client learns the scheme from the 401's challenge, and whether the token it sent was refused.
    const initialize = (headers: Record<string, string>) =>
      fetch(`${base}/app/sre/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
      });
    const anonymous = await initialize({});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="vigil"');
    const refusedToken = await initialize({ authorization: "Bearer vgl_not-a-real-key-0000000000" });
    expect(refusedToken.status).toBe(401);
    expect(refusedToken.headers.get("www-authenticate")).toBe('Bearer realm="vigil", error="invalid_token"');
    const rotated = await call(h, auth, "POST", "/api/v1/apps/sre/token/rotate");
    expect(rotated.statusCode).toBe(200);
    await expect(connect(appToken)).rejects.toThrow(/UNAUTHENTICATED/);
    const fresh = await connect(rotated.json().app_token);
    expect((await fresh.listTools()).tools).toHaveLength(MCP_TOOLS.length);
    await fresh.close();
    appToken = rotated.json().app_token;
  });
});
