// Issue 6, point 7, end to end on the real queue: webhooks that start workflows and agents, polled
// the way a caller would (getWebhookRun until trace_id appears, then getExecutionTrace until it
// settles); a failing stage; a run terminated mid-way.
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Auth,
  call,
  createApprovedWorkflow,
  type Loopback,
  traceNode as node,
  readTrace,
  registerAgent,
  settledTrace,
  startLoopback,
  uniqueName,
} from "../../../test/automation-runs.ts";
import { describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";
import { createRunStageJob, watchExecutionJob } from "../executions/jobs.ts";
import { executionNodes } from "../tables.ts";
import { bodyToInput } from "./webhook-target.ts";

const RETRY_LIMIT = 1;
const jobs = [
  createRunStageJob({ retryLimit: RETRY_LIMIT, retryDelaySeconds: 1, retryBackoff: false }),
  watchExecutionJob,
];
const BASE = "/platform/api/v1/webhooks";

let loopback: Loopback;
beforeAll(async () => {
  loopback = await startLoopback();
});
afterAll(async () => {
  await loopback.close();
});

async function integration(h: Harness, auth: Auth): Promise<string> {
  const name = uniqueName("grafana");
  const response = await call(h, auth, "POST", "/api/v1/integrations", { name, type: "grafana" });
  expect(response.statusCode, response.body).toBe(201);
  return name;
}

async function createWebhook(h: Harness, auth: Auth, targetType: string, targetName: string) {
  const response = await call(h, auth, "POST", BASE, {
    name: uniqueName("hook"),
    target_type: targetType,
    target_name: targetName,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json() as { id: string; token: string };
}

function trigger(h: Harness, token: string, text: string) {
  return h.vigil.app.inject({
    method: "POST",
    url: `${BASE}/trigger`,
    headers: { authorization: `Bearer ${token}`, "content-type": "text/plain; charset=utf-8" },
    payload: text,
  });
}

/** What a caller does after the 202: poll the run until the execution's ids are recorded. */
const pollRun = (h: Harness, auth: Auth, webhookId: string, invocationId: string) =>
  waitFor(async () => {
    const response = await call(h, auth, "GET", `${BASE}/${webhookId}/runs/${invocationId}`);
    expect(response.statusCode, response.body).toBe(200);
    const run = response.json();
    return run.trace_id ? run : undefined;
  });

describe("bodyToInput", () => {
  it("reads a JSON object as inputs and any other body as the text input `message`", () => {
    expect(bodyToInput('{"service":"x"}', "application/json; charset=utf-8")).toEqual({ service: "x" });
    expect(bodyToInput('{"a":1}', "application/vnd.alert+json")).toEqual({ a: 1 });
    expect(bodyToInput('{"a":1}', "text/plain")).toEqual({ message: '{"a":1}' });
    expect(bodyToInput("disk full", undefined)).toEqual({ message: "disk full" });
    expect(bodyToInput("", "text/plain")).toBeUndefined();
    expect(bodyToInput(" ", "application/json")).toBeUndefined();
    // JSON that is not an object is still a body the sender meant: a string is its value, the
    // rest the text as received.
    expect(bodyToInput('"disk full"', "application/json")).toEqual({ message: "disk full" });
    expect(bodyToInput('""', "application/json")).toBeUndefined();
    expect(bodyToInput("[1]", "application/json")).toEqual({ message: "[1]" });
    expect(bodyToInput("1", "application/json")).toEqual({ message: "1" });
    expect(bodyToInput("null", "application/json")).toEqual({ message: "null" });
    expect(bodyToInput("{", "application/json")).toEqual({ message: "{" });
  });

  it("stores text PostgreSQL cannot hold as U+FFFD, and takes input nested too deep to store as text", () => {
    expect(bodyToInput('{"a\\u0000":"b\\ud800"}', "application/json")).toEqual({ "a\ufffd": "b\ufffd" });
    expect(bodyToInput("x\u0000y", "text/plain")).toEqual({ message: "x\ufffdy" });
    const nested = (depth: number) => `{"a":${"[".repeat(depth - 1)}1${"]".repeat(depth - 1)}}`;
    expect(bodyToInput(nested(256), "application/json")).toEqual(JSON.parse(nested(256)));
    expect(bodyToInput(nested(5000), "application/json")).toEqual({ message: nested(5000) });
  });
});

describeEachEngine(
  "webhooks that start workflows and agents",
  (harness) => {
    it("runs a three-stage workflow with a parallel stage from a text/plain trigger, traced to the end", async () => {
      const h = harness();
      const me = await h.createKey();
      const grafana = await integration(h, me.auth);
      await registerAgent(h, me.auth, {
        name: "reader",
        instructions: "read: {{input.message}}",
        integrations: [grafana],
      });
      await registerAgent(h, me.auth, {
        name: "counter",
        instructions: "{{stages.fetch.output.body.count}} alerts firing",
        tools: ["http_request"],
        integrations: [grafana],
      });
      const workflow = uniqueName("incident");
      await createApprovedWorkflow(h, me.auth, {
        name: workflow,
        inputs: [{ name: "message", required: true }],
        stages: [
          {
            id: "fetch",
            action_type: "http_request",
            config: { method: "POST", url: `${loopback.url}/ok`, body: { message: "{{input.message}}" } },
          },
          {
            id: "analyze",
            parallel_agents: ["reader", "counter"],
            depends_on: ["fetch"],
            config: { http_request: { url: `${loopback.url}/ok?from={{agent.name}}` } },
          },
          {
            id: "report",
            action_type: "write_report",
            depends_on: ["analyze"],
            config: {
              name: "Webhook-Report.md",
              title: "Webhook incident",
              summary: "{{stages.analyze.output.reader.text}}",
              impact: "{{stages.analyze.output.counter.text}}",
              recommendations: "page the on-call",
              confidence: "medium",
            },
          },
        ],
      });
      const webhook = await createWebhook(h, me.auth, "workflow", workflow);

      const accepted = await trigger(h, webhook.token, "checkout is down");
      expect(accepted.statusCode, accepted.body).toBe(202);
      const ids = accepted.json();
      expect(ids).toEqual({
        webhook_id: webhook.id,
        invocation_id: expect.any(String),
        target_type: "workflow",
        target_name: workflow,
        session_id: expect.any(String),
        trace_id: expect.any(String),
        run_id: expect.any(String),
        workflow_version: 1,
      });

      const run = await pollRun(h, me.auth, webhook.id, ids.invocation_id);
      expect(run).toEqual({
        invocation_id: ids.invocation_id,
        webhook_id: webhook.id,
        target_type: "workflow",
        target_name: workflow,
        status: "accepted",
        received_at: expect.any(String),
        finished_at: expect.any(String),
        content_type: "text/plain; charset=utf-8",
        payload_bytes: Buffer.byteLength("checkout is down"),
        error: null,
        note: null,
        session_id: ids.session_id,
        trace_id: ids.trace_id,
        run_id: ids.run_id,
        outcome: { run_id: ids.run_id, workflow_version: 1 },
        headers: expect.objectContaining({ "content-type": "text/plain; charset=utf-8" }),
        payload: "checkout is down",
        payload_encoding: "utf8",
      });
      // The token is never stored with the payload.
      expect(run.headers.authorization).toBeUndefined();
      // The execution's run id finds the same record.
      const byRunId = await call(h, me.auth, "GET", `${BASE}/${webhook.id}/runs/${ids.run_id}`);
      expect(byRunId.json()).toEqual(run);

      const body = await settledTrace(h, me.auth, ids.trace_id);
      expect(body).toEqual({
        truncated: false,
        structured_output: {
          summary: "read: checkout is down",
          impact: "2 alerts firing",
          recommendations: "page the on-call",
          confidence: "medium",
        },
        execution: {
          trace_id: ids.trace_id,
          run_id: ids.run_id,
          agent_name: workflow,
          status: "completed",
          started_at: expect.any(String),
          duration_ms: expect.any(Number),
          total_cost: 0,
          trace_settled: true,
          target_type: "workflow",
          workflow_version: 1,
          session_id: ids.session_id,
          cancelled: false,
          error: null,
        },
        nodes: [
          node("stage:fetch", "stage", "fetch", "success"),
          node("stage:analyze", "stage", "analyze", "success"),
          node("stage:report", "stage", "report", "success"),
          node("stage:fetch/action:http_request", "action", "http_request", "success"),
          node("stage:analyze/agent:reader", "agent", "reader", "success"),
          node("stage:analyze/agent:counter", "agent", "counter", "success"),
          node("stage:report/action:write_report", "action", "write_report", "success"),
          node("stage:analyze/agent:counter/tool:1:http_request", "tool", "http_request", "success"),
        ],
        edges: [
          { source: "stage:fetch", target: "stage:analyze" },
          { source: "stage:analyze", target: "stage:report" },
          { source: "stage:fetch", target: "stage:fetch/action:http_request" },
          { source: "stage:analyze", target: "stage:analyze/agent:reader" },
          { source: "stage:analyze", target: "stage:analyze/agent:counter" },
          { source: "stage:report", target: "stage:report/action:write_report" },
          {
            source: "stage:analyze/agent:counter",
            target: "stage:analyze/agent:counter/tool:1:http_request",
          },
        ],
      });
      // The text reached the first stage as the input `message`.
      expect(loopback.bodies).toContain(JSON.stringify({ message: "checkout is down" }));

      // The run belongs to a session the webhook started; its report is an artifact there.
      const executions = await call(
        h,
        me.auth,
        "GET",
        `/platform/api/v1/executions?session_id=${ids.session_id}`,
      );
      expect(executions.json().map((item: { trace_id: string }) => item.trace_id)).toEqual([ids.trace_id]);
      const artifacts = await call(
        h,
        me.auth,
        "GET",
        `/platform/api/v1/sessions/${ids.session_id}/artifacts`,
      );
      expect(artifacts.json()).toEqual([
        expect.objectContaining({ session_id: ids.session_id, name: "Webhook-Report.md" }),
      ]);
    });

    it("answers 202 for any body: one holding U+0000 or a lone surrogate, JSON that is not an object, JSON nested too deep", async () => {
      const h = harness();
      const me = await h.createKey();
      const agent = uniqueName("nul");
      await registerAgent(h, me.auth, {
        name: agent,
        instructions: "looked at {{input.message}}",
        integrations: [await integration(h, me.auth)],
      });
      const webhook = await createWebhook(h, me.auth, "agent", agent);
      const accepted = await trigger(h, webhook.token, "disk\u0000full\ud800");
      expect(accepted.statusCode, accepted.body).toBe(202);
      const run = await pollRun(h, me.auth, webhook.id, accepted.json().invocation_id);
      const body = await settledTrace(h, me.auth, run.trace_id);
      expect(body.structured_output.summary).toBe("looked at disk\ufffdfull\ufffd");
      // The spec answers every trigger with 202: a JSON body that is not an object of inputs is the
      // text input message (a string its value), which the run reads.
      const summaryOf = async (payload: string) => {
        const json = await h.vigil.app.inject({
          method: "POST",
          url: `${BASE}/trigger`,
          headers: { authorization: `Bearer ${webhook.token}`, "content-type": "application/json" },
          payload,
        });
        expect(json.statusCode, json.body).toBe(202);
        const jsonRun = await pollRun(h, me.auth, webhook.id, json.json().invocation_id);
        return (await settledTrace(h, me.auth, jsonRun.trace_id)).structured_output.summary as string;
      };
      expect(await summaryOf('"disk full"')).toBe("looked at disk full");
      expect(await summaryOf('["disk", "full"]')).toBe('looked at ["disk", "full"]');
      expect(await summaryOf("{disk full")).toBe("looked at {disk full");
      // The summary keeps the start of a long message.
      expect(await summaryOf(`{"a":${"[".repeat(4999)}1${"]".repeat(4999)}}`)).toMatch(
        /^looked at \{"a":\[\[\[/,
      );
    });

    it("runs an agent target with the text as `message`", async () => {
      const h = harness();
      const me = await h.createKey();
      const agent = uniqueName("solo");
      await registerAgent(h, me.auth, {
        name: agent,
        instructions: "looked at {{input.message}}",
        integrations: [await integration(h, me.auth)],
      });
      const webhook = await createWebhook(h, me.auth, "agent", agent);
      const accepted = await trigger(h, webhook.token, "disk full on db-1");
      expect(accepted.statusCode, accepted.body).toBe(202);
      const ids = accepted.json();
      expect(ids).toMatchObject({ target_type: "agent", target_name: agent, workflow_version: null });
      const run = await pollRun(h, me.auth, webhook.id, ids.invocation_id);
      const body = await settledTrace(h, me.auth, run.trace_id);
      expect(body.execution).toMatchObject({ status: "completed", target_type: "agent", agent_name: agent });
      expect(body.structured_output.summary).toBe("looked at disk full on db-1");
      expect(body.nodes).toEqual([
        node(`stage:${agent}`, "stage", agent, "success"),
        node(`stage:${agent}/agent:${agent}`, "agent", agent, "success"),
      ]);
    });

    it("follows a failing stage to the error path of the trace", async () => {
      const h = harness();
      const me = await h.createKey();
      const workflow = uniqueName("fails");
      await createApprovedWorkflow(h, me.auth, {
        name: workflow,
        stages: [
          { id: "fetch", action_type: "http_request", config: { url: `${loopback.url}/fail` } },
          { id: "after", action_type: "json_transform", depends_on: ["fetch"], config: { expression: "1" } },
        ],
      });
      const webhook = await createWebhook(h, me.auth, "workflow", workflow);
      const accepted = await trigger(h, webhook.token, "try it");
      expect(accepted.statusCode, accepted.body).toBe(202);
      const run = await pollRun(h, me.auth, webhook.id, accepted.json().invocation_id);
      // The delivery was accepted; the run's failure is the trace's business.
      expect(run).toMatchObject({ status: "accepted", error: null });

      const body = await settledTrace(h, me.auth, run.trace_id);
      const reason = `http_request: GET ${loopback.url}/fail answered 500: boom`;
      expect(body.execution).toMatchObject({
        status: "error",
        trace_settled: true,
        cancelled: false,
        total_cost: 0,
        error: `stage fetch failed: ${reason}`,
      });
      expect(body.nodes).toEqual([
        node("stage:fetch", "stage", "fetch", "error", { attempt: RETRY_LIMIT + 1, error: reason }),
        node("stage:after", "stage", "after", "skipped", {
          attempt: 0,
          error: "skipped: stage fetch failed",
        }),
        node("stage:fetch/action:http_request", "action", "http_request", "error", {
          attempt: RETRY_LIMIT + 1,
          error: reason,
        }),
      ]);
      expect(body.edges).toEqual([
        { source: "stage:fetch", target: "stage:after" },
        { source: "stage:fetch", target: "stage:fetch/action:http_request" },
      ]);
      expect(body.structured_output).toEqual({
        summary: `stage fetch failed: ${reason}`,
        impact: "",
        recommendations: "",
        confidence: "",
      });
    });

    it("terminates a webhook's run mid-way through its session", async () => {
      const h = harness();
      const me = await h.createKey();
      const workflow = uniqueName("slow");
      await createApprovedWorkflow(h, me.auth, {
        name: workflow,
        stages: [
          {
            id: "wait",
            action_type: "http_request",
            config: { url: `${loopback.url}/slow`, timeout_ms: 60_000 },
          },
          { id: "next", action_type: "json_transform", depends_on: ["wait"], config: { expression: "1" } },
        ],
      });
      const webhook = await createWebhook(h, me.auth, "workflow", workflow);
      const before = loopback.hits.get("/slow") ?? 0;
      const accepted = await trigger(h, webhook.token, "hold on");
      expect(accepted.statusCode, accepted.body).toBe(202);
      const run = await pollRun(h, me.auth, webhook.id, accepted.json().invocation_id);
      await waitFor(async () => ((loopback.hits.get("/slow") ?? 0) > before ? true : undefined));
      const running = await readTrace(h, me.auth, run.trace_id);
      expect(running.execution).toMatchObject({ status: "running", trace_settled: false });

      const terminate = await call(
        h,
        me.auth,
        "POST",
        `/platform/api/v1/sessions/${run.session_id}/terminate?reason=webhook%20test`,
      );
      expect(terminate.statusCode, terminate.body).toBe(200);
      expect(terminate.json()).toEqual({ cancelled_workflows: 1 });
      const cancelled = await readTrace(h, me.auth, run.trace_id);
      expect(cancelled.execution).toMatchObject({
        status: "error",
        trace_settled: true,
        cancelled: true,
        error: "cancelled: webhook test",
      });
      expect(cancelled.nodes).toEqual([
        node("stage:wait", "stage", "wait", "error", { error: "cancelled: webhook test" }),
        node("stage:next", "stage", "next", "skipped", {
          attempt: 0,
          error: "skipped: cancelled: webhook test",
        }),
        node("stage:wait/action:http_request", "action", "http_request", "error", {
          error: "cancelled: webhook test",
        }),
      ]);

      // The dropped call changes nothing; the webhook's run record still points at the run.
      await loopback.dropped;
      const db = h.vigil.services.database.db;
      const [stage] = await db
        .select({ jobId: executionNodes.jobId })
        .from(executionNodes)
        .where(and(eq(executionNodes.traceId, run.trace_id), eq(executionNodes.key, "stage:wait")));
      await waitFor(async () => {
        const { rows } = await db.execute(
          sql`select state::text as state from pgboss.job where id = ${stage?.jobId ?? null}`,
        );
        return rows[0]?.state === "completed" ? true : undefined;
      });
      expect((await readTrace(h, me.auth, run.trace_id)).nodes).toEqual(cancelled.nodes);
      const again = await call(h, me.auth, "GET", `${BASE}/${webhook.id}/runs/${run.run_id}`);
      expect(again.json()).toEqual(run);
    });
  },
  {},
  { jobs },
);
