// Runs end to end on the real queue: a three-stage workflow with a parallel stage, a failing stage
// retried then closed, cancellation that survives a late worker, the trace and list endpoints, and
// runs that start when they are sent, not at the workers' next poll.
import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { itEnforcesAuth } from "../../../test/auth-matrix.ts";
import {
  call,
  createApprovedWorkflow,
  type Loopback,
  traceNode as node,
  type Owner,
  readTrace,
  registerAgent,
  settledTrace,
  startAs,
  startLoopback,
  uniqueName,
} from "../../../test/automation-runs.ts";
import { describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";
import { type AgentRunner, registerAgentRunner } from "../agents/agent-runners.ts";
import { executionNodes } from "../tables.ts";
import { createRunStageJob, watchExecutionJob } from "./jobs.ts";

const RETRY_LIMIT = 2;
const jobs = [
  createRunStageJob({ retryLimit: RETRY_LIMIT, retryDelaySeconds: 1, retryBackoff: false }),
  watchExecutionJob,
];

let loopback: Loopback;
beforeAll(async () => {
  loopback = await startLoopback();
});
afterAll(async () => {
  await loopback.close();
});

describeEachEngine(
  "executions",
  (harness) => {
    async function owner(): Promise<Owner> {
      return harness().createKey();
    }

    it("runs a three-stage workflow with a parallel stage to completion, with its report as an artifact", async () => {
      const h = harness();
      const me = await owner();
      await registerAgent(h, me.auth, { name: "probe-a", instructions: "A looked at {{input.service}}" });
      await registerAgent(h, me.auth, {
        name: "probe-b",
        instructions: "B saw {{stages.fetch.output.body.count}} alerts",
        tools: ["http_request"],
      });
      await createApprovedWorkflow(h, me.auth, {
        name: "triage",
        inputs: [{ name: "service", required: true, pattern: "^[a-z-]+$" }],
        stages: [
          {
            id: "fetch",
            action_type: "http_request",
            config: { method: "POST", url: `${loopback.url}/ok`, body: { service: "{{input.service}}" } },
          },
          {
            id: "analyze",
            parallel_agents: ["probe-a", "probe-b"],
            depends_on: ["fetch"],
            config: { http_request: { url: `${loopback.url}/ok?from={{agent.name}}` } },
          },
          {
            id: "report",
            action_type: "write_report",
            depends_on: ["analyze"],
            config: {
              name: "Incident-Report.md",
              title: "{{input.service}} incident",
              summary: "{{stages.analyze.output.probe-a.text}}",
              impact: "{{stages.analyze.output.probe-b.text}}",
              recommendations: "restart {{input.service}}",
              confidence: "high",
            },
          },
        ],
      });
      const started = await startAs(h, me, {
        target: { type: "workflow", name: "triage" },
        input: { service: "checkout" },
      });
      expect(started).toEqual({
        sessionId: expect.any(String),
        traceId: expect.any(String),
        runId: expect.any(String),
        targetType: "workflow",
        targetName: "triage",
        workflowVersion: 1,
      });

      const body = await settledTrace(h, me.auth, started.traceId);
      const summary = "A looked at checkout";
      expect(body).toEqual({
        truncated: false,
        structured_output: {
          summary,
          impact: "B saw 2 alerts",
          recommendations: "restart checkout",
          confidence: "high",
        },
        execution: {
          trace_id: started.traceId,
          run_id: started.runId,
          agent_name: "triage",
          status: "completed",
          started_at: expect.any(String),
          duration_ms: expect.any(Number),
          total_cost: 0,
          trace_settled: true,
          target_type: "workflow",
          workflow_version: 1,
          session_id: started.sessionId,
          cancelled: false,
          error: null,
        },
        nodes: [
          node("stage:fetch", "stage", "fetch", "success"),
          node("stage:analyze", "stage", "analyze", "success"),
          node("stage:report", "stage", "report", "success"),
          node("stage:fetch/action:http_request", "action", "http_request", "success"),
          node("stage:analyze/agent:probe-a", "agent", "probe-a", "success"),
          node("stage:analyze/agent:probe-b", "agent", "probe-b", "success"),
          node("stage:report/action:write_report", "action", "write_report", "success"),
          node("stage:analyze/agent:probe-b/tool:1:http_request", "tool", "http_request", "success"),
        ],
        edges: [
          { source: "stage:fetch", target: "stage:analyze" },
          { source: "stage:analyze", target: "stage:report" },
          { source: "stage:fetch", target: "stage:fetch/action:http_request" },
          { source: "stage:analyze", target: "stage:analyze/agent:probe-a" },
          { source: "stage:analyze", target: "stage:analyze/agent:probe-b" },
          { source: "stage:report", target: "stage:report/action:write_report" },
          {
            source: "stage:analyze/agent:probe-b",
            target: "stage:analyze/agent:probe-b/tool:1:http_request",
          },
        ],
      });
      // The templated POST body reached the server; the agent's tool call too.
      expect(loopback.bodies).toContain(JSON.stringify({ service: "checkout" }));

      // What each node produced is what the next stages read.
      const outputs = await h.vigil.services.database.db
        .select({ key: executionNodes.key, output: executionNodes.output })
        .from(executionNodes)
        .where(and(eq(executionNodes.traceId, started.traceId), eq(executionNodes.type, "stage")));
      expect(Object.fromEntries(outputs.map((row) => [row.key, row.output]))).toEqual({
        "stage:fetch": {
          status: 200,
          content_type: "application/json",
          body: { status: "firing", count: 2, echo: { service: "checkout" } },
          truncated: false,
        },
        "stage:analyze": {
          "probe-a": { agent: "probe-a", text: summary, tools: {} },
          "probe-b": {
            agent: "probe-b",
            text: "B saw 2 alerts",
            tools: {
              http_request: {
                status: 200,
                content_type: "application/json",
                body: { status: "firing", count: 2, echo: null },
                truncated: false,
              },
            },
          },
        },
        "stage:report": {
          artifact: "Incident-Report.md",
          size_bytes: expect.any(Number),
          structured_output: body.structured_output,
        },
      });

      const artifacts = await call(
        h,
        me.auth,
        "GET",
        `/platform/api/v1/sessions/${started.sessionId}/artifacts`,
      );
      expect(artifacts.statusCode).toBe(200);
      const markdown = [
        "# checkout incident",
        "",
        "## Summary",
        "",
        summary,
        "",
        "## Impact",
        "",
        "B saw 2 alerts",
        "",
        "## Recommendations",
        "",
        "restart checkout",
        "",
        "Confidence: high",
        "",
      ].join("\n");
      expect(artifacts.json()).toEqual([
        {
          id: expect.any(String),
          session_id: started.sessionId,
          name: "Incident-Report.md",
          mime_type: "text/markdown; charset=utf-8",
          size_bytes: Buffer.byteLength(markdown),
          created_at: expect.any(String),
        },
      ]);
      const base = `/platform/api/v1/sessions/${started.sessionId}/artifacts`;
      for (const ref of [artifacts.json()[0].id, "incident-report.MD"]) {
        const download = await call(h, me.auth, "GET", `${base}/${ref}/download`);
        expect(download.statusCode).toBe(200);
        expect(download.headers["content-type"]).toBe("application/octet-stream");
        expect(download.headers["content-disposition"]).toBe('attachment; filename="Incident-Report.md"');
        expect(download.body).toBe(markdown);
      }
      const missing = await call(h, me.auth, "GET", `${base}/other.md/download`);
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ errCode: "NOT_FOUND" });
    });

    it("refuses to start a draft, an unknown target or missing inputs", async () => {
      const h = harness();
      const me = await owner();
      const created = await call(h, me.auth, "POST", "/platform/api/v1/workflows", {
        name: "draft-only",
        stages: [{ id: "a", action_type: "json_transform", config: { expression: "1" } }],
      });
      expect(created.statusCode).toBe(201);
      await expect(
        startAs(h, me, { target: { type: "workflow", name: "draft-only" } }),
      ).rejects.toMatchObject({
        code: "TARGET_NOT_FOUND",
        message: "workflow draft-only has no approved version",
      });
      await expect(startAs(h, me, { target: { type: "agent", name: "nobody" } })).rejects.toMatchObject({
        code: "TARGET_NOT_FOUND",
        details: { target_type: "agent", target_name: "nobody" },
      });
      await createApprovedWorkflow(h, me.auth, {
        name: "needs-input",
        inputs: [{ name: "service", required: true, pattern: "^[a-z]+$" }],
        stages: [{ id: "a", action_type: "json_transform", config: { expression: "input.service" } }],
      });
      await expect(
        startAs(h, me, { target: { type: "workflow", name: "needs-input" }, input: {} }),
      ).rejects.toMatchObject({
        code: "VALIDATION_FAILED",
        message: "input.service: is required",
      });
      await expect(
        startAs(h, me, { target: { type: "workflow", name: "needs-input" }, input: { service: "Bad!" } }),
      ).rejects.toMatchObject({
        code: "VALIDATION_FAILED",
        message: "input.service: does not match ^[a-z]+$",
      });
    });

    it("retries a failing stage, then marks the node and the run error and skips what follows", async () => {
      const h = harness();
      const me = await owner();
      const name = uniqueName("fails");
      await createApprovedWorkflow(h, me.auth, {
        name,
        stages: [
          { id: "fetch", action_type: "http_request", config: { url: `${loopback.url}/fail` } },
          { id: "after", action_type: "json_transform", depends_on: ["fetch"], config: { expression: "1" } },
        ],
      });
      const before = loopback.hits.get("/fail") ?? 0;
      const started = await startAs(h, me, { target: { type: "workflow", name } });
      const body = await settledTrace(h, me.auth, started.traceId);
      const reason = `http_request: GET ${loopback.url}/fail answered 500: boom`;
      expect(body.execution).toMatchObject({
        status: "error",
        trace_settled: true,
        cancelled: false,
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
      expect((loopback.hits.get("/fail") ?? 0) - before).toBe(RETRY_LIMIT + 1);
    });

    it("fails at once, without retries, on a host that is not allow-listed", async () => {
      const h = harness();
      const me = await owner();
      const name = uniqueName("blocked");
      await createApprovedWorkflow(h, me.auth, {
        name,
        stages: [{ id: "fetch", action_type: "http_request", config: { url: "http://example.com/x" } }],
      });
      const started = await startAs(h, me, { target: { type: "workflow", name } });
      const body = await settledTrace(h, me.auth, started.traceId);
      const reason = "http_request: host example.com is not on AUTOMATION_HTTP_ALLOWED_HOSTS";
      expect(body.execution).toMatchObject({ status: "error", error: `stage fetch failed: ${reason}` });
      expect(body.nodes[0]).toEqual(node("stage:fetch", "stage", "fetch", "error", { error: reason }));
    });

    it("fails an llm agent with a clear reason when no LLM runner is registered", async () => {
      const h = harness();
      const me = await owner();
      const name = uniqueName("thinker");
      await registerAgent(h, me.auth, { name, kind: "llm" });
      const started = await startAs(h, me, { target: { type: "agent", name } });
      const body = await settledTrace(h, me.auth, started.traceId);
      const reason = `agent ${name}: no LLM configured (set LLM_BASE_URL and LLM_MODEL) to run llm agents`;
      expect(body.execution).toMatchObject({
        agent_name: name,
        target_type: "agent",
        workflow_version: null,
        status: "error",
        error: `stage ${name} failed: ${reason}`,
      });
      expect(body.nodes).toEqual([
        node(`stage:${name}`, "stage", name, "error", { error: reason }),
        node(`stage:${name}/agent:${name}`, "agent", name, "error", { error: reason }),
      ]);
    });

    it("runs a registered agent runner (the LLM extension point), pricing its tokens", async () => {
      const h = harness();
      const me = await owner();
      const name = uniqueName("fake-llm");
      await registerAgent(h, me.auth, { name, kind: "llm", model: "gpt-4o-mini", tools: ["json_transform"] });
      const runner: AgentRunner = async ({ agent, callTool }) => {
        const answer = await callTool("json_transform", { expression: '"checked " & execution.target_name' });
        return {
          output: { text: String(answer) },
          usage: { model: agent.model ?? "", promptTokens: 1000, completionTokens: 500 },
        };
      };
      const unregister = registerAgentRunner("llm", runner);
      try {
        const started = await startAs(h, me, { target: { type: "agent", name } });
        const body = await settledTrace(h, me.auth, started.traceId);
        // gpt-4o-mini: 1000 * 0.00015 / 1K + 500 * 0.0006 / 1K
        const cost = 0.00045;
        expect(body.execution).toMatchObject({ status: "completed", total_cost: cost });
        expect(body.structured_output.summary).toBe(`checked ${name}`);
        expect(body.nodes).toEqual([
          node(`stage:${name}`, "stage", name, "success"),
          node(`stage:${name}/agent:${name}`, "agent", name, "success", { cost }),
          node(`stage:${name}/agent:${name}/tool:1:json_transform`, "tool", "json_transform", "success"),
        ]);
        expect(body.edges).toEqual([
          { source: `stage:${name}`, target: `stage:${name}/agent:${name}` },
          {
            source: `stage:${name}/agent:${name}`,
            target: `stage:${name}/agent:${name}/tool:1:json_transform`,
          },
        ]);
      } finally {
        unregister();
      }
    });

    it("cancels a run mid-way through terminateSession: its HTTP call is dropped and the run stays cancelled", async () => {
      const h = harness();
      const me = await owner();
      const name = uniqueName("slow");
      await createApprovedWorkflow(h, me.auth, {
        name,
        stages: [
          {
            id: "wait",
            action_type: "http_request",
            config: { url: `${loopback.url}/slow`, timeout_ms: 60_000 },
          },
          { id: "next", action_type: "json_transform", depends_on: ["wait"], config: { expression: "1" } },
        ],
      });
      const before = loopback.hits.get("/slow") ?? 0;
      const started = await startAs(h, me, { target: { type: "workflow", name } });
      await waitFor(async () => ((loopback.hits.get("/slow") ?? 0) > before ? true : undefined));
      const running = await readTrace(h, me.auth, started.traceId);
      expect(running.execution).toMatchObject({ status: "running", trace_settled: false });
      expect(running.nodes.map((item: { id: string; state: string }) => [item.id, item.state])).toEqual([
        ["stage:wait", "running"],
        ["stage:next", "pending"],
        ["stage:wait/action:http_request", "running"],
      ]);

      const terminate = `/platform/api/v1/sessions/${started.sessionId}/terminate`;
      const first = await call(h, me.auth, "POST", `${terminate}?reason=operator%20stop`);
      expect(first.statusCode).toBe(200);
      expect(first.json()).toEqual({ cancelled_workflows: 1 });
      const cancelled = await readTrace(h, me.auth, started.traceId);
      expect(cancelled.execution).toMatchObject({
        status: "error",
        trace_settled: true,
        cancelled: true,
        error: "cancelled: operator stop",
      });
      expect(cancelled.nodes).toEqual([
        node("stage:wait", "stage", "wait", "error", { error: "cancelled: operator stop" }),
        node("stage:next", "stage", "next", "skipped", {
          attempt: 0,
          error: "skipped: cancelled: operator stop",
        }),
        node("stage:wait/action:http_request", "action", "http_request", "error", {
          error: "cancelled: operator stop",
        }),
      ]);

      // The worker sees the cancellation, drops its HTTP call and finishes its job; the run does not
      // change.
      await loopback.dropped;
      const [stage] = await h.vigil.services.database.db
        .select({ jobId: executionNodes.jobId })
        .from(executionNodes)
        .where(and(eq(executionNodes.traceId, started.traceId), eq(executionNodes.key, "stage:wait")));
      await waitFor(async () => {
        const { rows } = await h.vigil.services.database.db.execute(
          sql`select state::text as state from pgboss.job where id = ${stage?.jobId ?? null}`,
        );
        return rows[0]?.state === "completed" ? true : undefined;
      });
      expect(await readTrace(h, me.auth, started.traceId)).toEqual({
        ...cancelled,
        execution: { ...cancelled.execution, duration_ms: expect.any(Number) },
      });

      const again = await call(h, me.auth, "POST", terminate);
      expect(again.json()).toEqual({ cancelled_workflows: 0 });
      const stranger = await owner();
      expect((await call(h, stranger.auth, "POST", terminate)).statusCode).toBe(404);
      const unknown = await call(h, me.auth, "POST", `/platform/api/v1/sessions/${randomUUID()}/terminate`);
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ errCode: "NOT_FOUND" });
      expect(
        (await call(h, me.auth, "POST", "/platform/api/v1/sessions/not-a-session/terminate")).statusCode,
      ).toBe(404);
    });

    it("answers 400 for a malformed trace id and 404 for one the caller does not own", async () => {
      const h = harness();
      const me = await owner();
      const malformed = await call(h, me.auth, "GET", "/platform/api/v1/executions/not-a-uuid");
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json()).toEqual({
        msg: 'traceId: must match format "uuid"',
        errCode: "VALIDATION_FAILED",
        extras: [{ field: "traceId", location: "params", rule: "format" }],
      });
      const unknown = await call(h, me.auth, "GET", `/platform/api/v1/executions/${randomUUID()}`);
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ errCode: "NOT_FOUND", msg: "execution not found" });

      const agent = uniqueName("solo");
      await registerAgent(h, me.auth, { name: agent });
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      const stranger = await owner();
      const foreign = await call(h, stranger.auth, "GET", `/platform/api/v1/executions/${started.traceId}`);
      expect(foreign.statusCode).toBe(404);
    });

    it("lists executions newest first, filtered by session and agent name, paged", async () => {
      const h = harness();
      const me = await owner();
      await registerAgent(h, me.auth, { name: "lister-a", instructions: "a" });
      await registerAgent(h, me.auth, { name: "lister-b", instructions: "b" });
      const first = await startAs(h, me, { target: { type: "agent", name: "lister-a" } });
      const second = await startAs(h, me, {
        target: { type: "agent", name: "lister-b" },
        sessionId: first.sessionId,
      });
      const third = await startAs(h, me, { target: { type: "agent", name: "lister-a" } });
      for (const run of [first, second, third]) await settledTrace(h, me.auth, run.traceId);

      const list = async (query: string) => {
        const response = await call(h, me.auth, "GET", `/platform/api/v1/executions${query}`);
        expect(response.statusCode, response.body).toBe(200);
        return response.json().map((item: { trace_id: string }) => item.trace_id);
      };
      const all = await call(h, me.auth, "GET", "/platform/api/v1/executions");
      expect(all.json()).toHaveLength(3);
      expect(all.json()[0]).toEqual({
        trace_id: expect.any(String),
        run_id: expect.any(String),
        session_id: expect.any(String),
        target_type: "agent",
        target_name: expect.any(String),
        agent_name: expect.any(String),
        workflow_version: null,
        status: "completed",
        cancelled: false,
        started_at: expect.any(String),
        finished_at: expect.any(String),
        duration_ms: expect.any(Number),
        total_cost: 0,
      });
      expect(new Set(await list(""))).toEqual(new Set([first.traceId, second.traceId, third.traceId]));
      expect(new Set(await list(`?session_id=${first.sessionId}`))).toEqual(
        new Set([first.traceId, second.traceId]),
      );
      expect(new Set(await list("?agent_name=lister-a"))).toEqual(new Set([first.traceId, third.traceId]));
      expect(await list(`?agent_name=lister-a&session_id=${third.sessionId}`)).toEqual([third.traceId]);
      const paged = [...(await list("?limit=2")), ...(await list("?limit=2&offset=2"))];
      expect(new Set(paged)).toEqual(new Set([first.traceId, second.traceId, third.traceId]));
      expect(await list("?agent_name=nobody")).toEqual([]);
      // session_id is a string (getSessionByID answers 404 for any id that is no session's): one that
      // is not a session's id lists nothing.
      expect(await list("?session_id=nope")).toEqual([]);
      for (const query of ["?limit=0", "?limit=101", "?offset=-1"]) {
        const response = await call(h, me.auth, "GET", `/platform/api/v1/executions${query}`);
        expect(response.statusCode).toBe(400);
        expect(response.json()).toMatchObject({ errCode: "VALIDATION_FAILED" });
      }
      const stranger = await owner();
      expect((await call(h, stranger.auth, "GET", "/platform/api/v1/executions")).json()).toEqual([]);
    });

    const ownedRun = (suffix: string) => async (h: Harness, who: Owner) => {
      const agent = uniqueName("owned");
      await registerAgent(h, who.auth, { name: agent });
      const started = await startAs(h, who, { target: { type: "agent", name: agent } });
      return suffix.replace("{trace}", started.traceId).replace("{session}", started.sessionId);
    };
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "aios_automation_read",
      url: "/platform/api/v1/executions",
    });
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "aios_automation_read",
      url: ownedRun("/platform/api/v1/executions/{trace}"),
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "POST",
      scope: "aios_automation_write",
      url: ownedRun("/platform/api/v1/sessions/{session}/terminate"),
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "aios_automation_read",
      url: ownedRun("/platform/api/v1/sessions/{session}/artifacts"),
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "aios_automation_read",
      url: ownedRun("/platform/api/v1/sessions/{session}/artifacts/report.md/download"),
      ownedResource: true,
    });
  },
  {},
  { jobs },
);

// The stage queue's workers poll once an hour here: a run that waited for their poll would not
// finish within the test. The commit that sends a run's first stage wakes them.
describeEachEngine(
  "a run's stage workers, woken when the run is sent",
  (harness) => {
    it("runs each new run at once, without waiting for the workers' next poll", async () => {
      const h = harness();
      const me = await h.createKey();
      const name = uniqueName("wake");
      await createApprovedWorkflow(h, me.auth, {
        name,
        stages: [{ id: "call", action_type: "http_request", config: { url: `${loopback.url}/ok` } }],
      });
      const before = loopback.hits.get("/ok") ?? 0;
      // Two runs one after the other: the workers' first fetch, at start, cannot have found either.
      for (let n = 1; n <= 2; n++) {
        const started = await startAs(h, me, { target: { type: "workflow", name } });
        const trace = await settledTrace(h, me.auth, started.traceId);
        expect(trace.execution.status).toBe("completed");
      }
      expect((loopback.hits.get("/ok") ?? 0) - before).toBe(2);
    });
  },
  {},
  { jobs, pollingIntervalSeconds: 3600 },
);
