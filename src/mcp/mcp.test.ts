// The MCP server over real HTTP: the SDK's own client and Streamable HTTP transport against a
// listening Vigil on loopback, authenticated with the app token.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { beforeAll, expect, it } from "vitest";
import { poll } from "../../test/alertmanager-process.ts";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../test/alerts.ts";
import { type Auth, call, describeEachEngine } from "../../test/harness.ts";

type ToolResult = { content: { type: string; text: string }[]; isError?: boolean };

const PAYMENTS = { cluster: "prod-eu-west-1", env: "production", namespace: "payments" };
const now = Date.now();
const at = (minutes: number) => new Date(now - minutes * 60_000).toISOString();

describeEachEngine("MCP server", (harness) => {
  let base = "";
  let auth: Auth;
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
    await h.vigil.app.listen({ port: 0, host: "127.0.0.1" });
    const address = h.vigil.app.server.address();
    if (!address || typeof address !== "object") throw new Error("vigil is not listening");
    base = `http://127.0.0.1:${address.port}`;
    ({ auth } = await h.createKey());
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
    ]);
    expect(list?.description).toContain("scope sre_alerts_read");
    await client.close();
  });

  it("answers two tool calls with the app token: the list and an alert's storm", async () => {
    const client = await connect(appToken);
    const listed = JSON.parse(
      textOf(await client.callTool({ name: "list_alerts", arguments: { q: "error" } })),
    );
    expect(listed).toMatchObject({ total: 1, page: 1, page_size: 20, summary: { total_active: 2 } });
    expect(listed.alerts.map((alert: { id: string }) => alert.id)).toEqual([ids[1]]);
    const storm = JSON.parse(
      textOf(await client.callTool({ name: "get_alert_storm", arguments: { id: ids[0] } })),
    );
    expect(storm).toMatchObject({
      alert_id: ids[0],
      storm_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      total: 2,
    });
    expect(storm.alerts.map((alert: { id: string }) => alert.id).sort()).toEqual([...ids].sort());
    const history = JSON.parse(
      textOf(await client.callTool({ name: "get_alert_history", arguments: { id: ids[1] } })),
    );
    expect(history.alert_id).toBe(ids[1]);
    expect(history.events[0]).toMatchObject({ seq: 1, kind: "created", actor: "source" });
    await client.close();
  });

  it("validates tool input with the HTTP API's schema and answers a foreign tenant's alert as not found", async () => {
    const client = await connect(appToken);
    const bad = (await client.callTool({ name: "list_alerts", arguments: { page_size: 501 } })) as ToolResult;
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^VALIDATION_FAILED: page_size: /);
    const unknownField = (await client.callTool({
      name: "get_alert",
      arguments: { id: "x", extra: 1 },
    })) as ToolResult;
    expect(unknownField.isError).toBe(true);
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
    const rotated = await call(h, auth, "POST", "/api/v1/apps/sre/token/rotate");
    expect(rotated.statusCode).toBe(200);
    await expect(connect(appToken)).rejects.toThrow(/UNAUTHENTICATED/);
    const fresh = await connect(rotated.json().app_token);
    expect((await fresh.listTools()).tools).toHaveLength(4);
    await fresh.close();
    appToken = rotated.json().app_token;
  });
});
