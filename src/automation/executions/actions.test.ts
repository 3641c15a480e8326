// The built-in actions and templates on their own (no database, a loopback server for HTTP), then
// http_request's outbound rules once more through a real workflow run.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Auth,
  call,
  createApprovedWorkflow,
  type Loopback,
  startAs,
  startLoopback,
  uniqueName,
} from "../../../test/automation-runs.ts";
import { describeEachEngine, waitFor } from "../../../test/harness.ts";
import { loadConfig } from "../../config.ts";
import { costOf } from "../../llm/index.ts";
import { HTTP_RESPONSE_MAX_BYTES, runAction, StepError } from "./actions.ts";
import { renderText, renderValue } from "./template.ts";

const context = {
  input: { service: "checkout", count: 3 },
  stages: {
    fetch: {
      output: {
        body: {
          items: [
            { name: "a", state: "firing" },
            { name: "b", state: "ok" },
          ],
        },
      },
    },
  },
};

describe("templates", () => {
  it("renders paths as text, objects as JSON and missing paths as nothing", () => {
    expect(
      renderText(
        "{{input.service}} x{{ input.count }} {{stages.fetch.output.body.items.0}} [{{nope.x}}]",
        context,
      ),
    ).toBe('checkout x3 {"name":"a","state":"firing"} []');
    expect(renderText("{{input.constructor}}{{input.__proto__}}", context)).toBe("");
  });

  it("keeps the value itself for a string that is one placeholder", () => {
    expect(
      renderValue(
        {
          n: "{{input.count}}",
          list: ["{{stages.fetch.output.body.items.1.name}}", "{{gone}}"],
          s: "v={{input.count}}",
        },
        context,
      ),
    ).toEqual({ n: 3, list: ["b", null], s: "v=3" });
  });
});

// Vigil's own address and database as loadConfig defaults them (127.0.0.1:8080, PGlite).
const defaults = loadConfig({});
const configWith = (hosts: string[], overrides: Partial<typeof defaults> = {}) => ({
  ...defaults,
  automationHttpAllowedHosts: hosts,
  ...overrides,
});

describe("json_transform", () => {
  const env = { config: configWith([]), context };

  it("evaluates JSONata over the run's context", async () => {
    const outcome = await runAction(
      "json_transform",
      {
        expression:
          '{"firing": stages.fetch.output.body.items[state = "firing"].name, "svc": $uppercase(input.service)}',
      },
      env,
    );
    expect(outcome).toEqual({
      output: { firing: "a", svc: "CHECKOUT" },
      artifacts: [],
      structuredOutput: null,
    });
    expect((await runAction("json_transform", { expression: "nothing.here" }, env)).output).toBeNull();
  });

  it("fails without retry on a bad or endless expression", async () => {
    await expect(runAction("json_transform", { expression: "(" }, env)).rejects.toMatchObject({
      name: "StepError",
      retryable: false,
    });
    await expect(runAction("json_transform", {}, env)).rejects.toThrow(
      "json_transform: expression is required",
    );
    const endless = "($f := function($n) { $f($n + 1) }; $f(0))";
    await expect(runAction("json_transform", { expression: endless }, env)).rejects.toBeInstanceOf(StepError);
  });
});

describe("write_report", () => {
  it("renders the Markdown, the artifact and the structured output", async () => {
    const outcome = await runAction(
      "write_report",
      {
        name: "r.md",
        template: "# {{report.title}}\n{{report.summary}} ({{input.count}})",
        title: "{{input.service}}",
        summary: "all good",
        confidence: "low",
      },
      { config: configWith([]), context },
    );
    const structured = { summary: "all good", impact: "", recommendations: "", confidence: "low" };
    expect(outcome.structuredOutput).toEqual(structured);
    expect(outcome.output).toEqual({ artifact: "r.md", size_bytes: 23, structured_output: structured });
    expect(outcome.artifacts.map((item) => [item.name, item.mimeType, item.content.toString()])).toEqual([
      ["r.md", "text/markdown; charset=utf-8", "# checkout\nall good (3)"],
    ]);
    await expect(
      runAction("write_report", { name: "../etc/passwd" }, { config: configWith([]), context }),
    ).rejects.toThrow("write_report: name must be a file name");
  });
});

describe("http_request", () => {
  let server: Server;
  let port = 0;
  let hits = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits += 1;
      if (req.url === "/big") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(`"${"x".repeat(HTTP_RESPONSE_MAX_BYTES * 2)}"`);
      } else if (req.url === "/redirect") {
        res.writeHead(302, { location: "http://example.com/" });
        res.end();
      } else if (req.url === "/missing") {
        res.writeHead(404);
        res.end("no");
      } else if (req.url === "/hang") {
        // never answers
      } else {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("plain");
      }
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
  });
  const env = (hosts: string[], overrides: Partial<typeof defaults> = {}) => ({
    config: configWith(hosts, overrides),
    context,
  });

  it("calls an allow-listed host, by name or by name and port", async () => {
    for (const hosts of [["127.0.0.1"], [`127.0.0.1:${port}`]]) {
      const outcome = await runAction("http_request", { url: `http://127.0.0.1:${port}/x` }, env(hosts));
      expect(outcome.output).toEqual({
        status: 200,
        content_type: "text/plain",
        body: "plain",
        truncated: false,
      });
    }
    await expect(
      runAction(
        "http_request",
        { url: `http://127.0.0.1:${port}/x` },
        env([`127.0.0.1:${port + 1}`, "localhost"]),
      ),
    ).rejects.toMatchObject({
      retryable: false,
      message: `http_request: host 127.0.0.1:${port} is not on AUTOMATION_HTTP_ALLOWED_HOSTS`,
    });
  });

  it("truncates a large answer and does not follow redirects", async () => {
    const big = await runAction("http_request", { url: `http://127.0.0.1:${port}/big` }, env(["127.0.0.1"]));
    expect(big.output).toMatchObject({ status: 200, truncated: true });
    expect(((big.output as { body: string }).body as string).length).toBe(HTTP_RESPONSE_MAX_BYTES);
    await expect(
      runAction("http_request", { url: `http://127.0.0.1:${port}/redirect` }, env(["127.0.0.1"])),
    ).rejects.toMatchObject({ retryable: false, message: expect.stringContaining("answered 302") });
  });

  it("never calls Vigil's own port, the database's or a metadata address, even on an allowed host", async () => {
    const before = hits;
    const never = (host: string, what: string) =>
      `http_request: host ${host} is ${what}, which Vigil never calls`;
    for (const [url, overrides, hosts, message] of [
      [
        `http://127.0.0.1:${port}/x`,
        { port },
        ["127.0.0.1"],
        never(`127.0.0.1:${port}`, "Vigil's own address"),
      ],
      [
        `http://localhost:${port}/x`,
        { port },
        ["localhost"],
        never(`localhost:${port}`, "Vigil's own address"),
      ],
      [
        `http://127.1:${port}/x`,
        { databaseUrl: `postgres://localhost:${port}/vigil` },
        ["127.0.0.1"],
        never(`127.0.0.1:${port}`, "the database's address"),
      ],
      [
        "http://169.254.169.254/latest/meta-data/",
        {},
        ["169.254.169.254"],
        never("169.254.169.254", "169.254.169.254, a link-local, metadata or reserved address"),
      ],
    ] as const) {
      await expect(runAction("http_request", { url }, env([...hosts], overrides))).rejects.toMatchObject({
        retryable: false,
        message,
      });
    }
    expect(hits).toBe(before);
    // The same peer, with Vigil and its database elsewhere, is called.
    expect(
      (await runAction("http_request", { url: `http://127.1:${port}/x` }, env(["127.0.0.1"]))).output,
    ).toMatchObject({
      status: 200,
    });
  });

  it("retries 5xx, timeouts and network errors but not other statuses or bad settings", async () => {
    await expect(
      runAction("http_request", { url: `http://127.0.0.1:${port}/missing` }, env(["127.0.0.1"])),
    ).rejects.toMatchObject({
      retryable: false,
      message: `http_request: GET http://127.0.0.1:${port}/missing answered 404: no`,
    });
    await expect(
      runAction(
        "http_request",
        { url: `http://127.0.0.1:${port}/hang`, timeout_ms: 200 },
        env(["127.0.0.1"]),
      ),
    ).rejects.toMatchObject({ retryable: true, message: expect.stringContaining("no answer within 200 ms") });
    await expect(
      runAction("http_request", { url: "http://127.0.0.1:1/" }, env(["127.0.0.1"])),
    ).rejects.toMatchObject({
      retryable: true,
    });
    for (const [settings, message] of [
      [{}, "url is required"],
      [{ url: "ftp://127.0.0.1/" }, "url must be http(s)"],
      [{ url: "http://127.0.0.1/", method: "TRACE" }, "method must be one of"],
      [{ url: "http://127.0.0.1/", timeout_ms: 0 }, "timeout_ms must be an integer"],
    ] as const) {
      await expect(runAction("http_request", settings, env(["127.0.0.1"]))).rejects.toMatchObject({
        retryable: false,
        message: expect.stringContaining(message),
      });
    }
  });
});

describe("price table and config", () => {
  it("prices tokens per 1K by model; builtin and unknown models cost 0", () => {
    expect(costOf({ model: "gpt-4o", promptTokens: 2000, completionTokens: 1000 })).toBe(0.015);
    expect(costOf({ model: "my-local-llama", promptTokens: 2000, completionTokens: 1000 })).toBe(0);
    expect(costOf(null)).toBe(0);
  });

  it("reads AUTOMATION_HTTP_ALLOWED_HOSTS, loopback by default", () => {
    expect(loadConfig({}).automationHttpAllowedHosts).toEqual(["127.0.0.1", "localhost"]);
    expect(
      loadConfig({ AUTOMATION_HTTP_ALLOWED_HOSTS: " Api.Example.com, 10.0.0.5:8080 ,," })
        .automationHttpAllowedHosts,
    ).toEqual(["api.example.com", "10.0.0.5:8080"]);
  });
});

describeEachEngine("http_request in a workflow run", (harness) => {
  let loopback: Loopback;
  beforeAll(async () => {
    loopback = await startLoopback();
  });
  afterAll(async () => {
    await loopback.close();
  });

  async function stageOutcome(auth: Auth, traceId: string) {
    return waitFor(async () => {
      const response = await call(harness(), auth, "GET", `/platform/api/v1/executions/${traceId}`);
      const body = response.json() as { execution: { status: string; error: string | null } };
      return body.execution.status === "running" ? undefined : body.execution;
    });
  }

  it("calls an allowed peer, and never Vigil's own listening port", async () => {
    const h = harness();
    const me = await h.createKey();
    const name = uniqueName("fetch");
    await createApprovedWorkflow(h, me.auth, {
      name,
      stages: [{ id: "fetch", action_type: "http_request", config: { url: `${loopback.url}/ok` } }],
    });
    const allowed = await startAs(h, me, { target: { type: "workflow", name } });
    expect(await stageOutcome(me.auth, allowed.traceId)).toMatchObject({ status: "completed" });
    const before = loopback.hits.get("/ok");
    expect(before).toBe(1);

    // As if Vigil listened on the peer's port: the same stage is refused, at once and for good.
    const config = h.vigil.services.config;
    const port = config.port;
    config.port = Number(new URL(loopback.url).port);
    try {
      const refused = await startAs(h, me, { target: { type: "workflow", name } });
      expect(await stageOutcome(me.auth, refused.traceId)).toMatchObject({
        status: "error",
        error: `stage fetch failed: http_request: host ${new URL(loopback.url).host} is Vigil's own address, which Vigil never calls`,
      });
    } finally {
      config.port = port;
    }
    expect(loopback.hits.get("/ok")).toBe(before);
  });
});
