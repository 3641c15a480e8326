// A stage's failure while other stages run: those not started are skipped, those under way run to
// their end and keep their own result (their HTTP call was made), and the run ends, and its trace
// settles, only once they have finished. The slow stage's request is held by a loopback server until
// the failure is recorded, then answered: no step depends on time.
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { and, eq } from "drizzle-orm";
import { expect, it } from "vitest";
import {
  call,
  createApprovedWorkflow,
  traceNode as node,
  type Owner,
  readTrace,
  settledTrace,
  startAs,
  uniqueName,
} from "../../../test/automation-runs.ts";
import { describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";
import { workContext } from "../../core/context.ts";
import { executionNodes } from "../tables.ts";
import { runStage } from "./engine.ts";
import { AUTOMATION_EXECUTION_JOBS, runStageJob } from "./jobs.ts";

const FAILURE = "json_transform: boom (at 7)";
const ANSWER = { status: "restarted" };

/** A loopback server that holds the one request it gets until `release()`, then answers ANSWER. */
async function startHeldServer({ status = 200 } = {}) {
  let markReceived = () => {};
  const received = new Promise<void>((resolve) => {
    markReceived = resolve;
  });
  let markDropped = () => {};
  const dropped = new Promise<void>((resolve) => {
    markDropped = resolve;
  });
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    res.on("close", () => {
      if (!res.writableEnded) markDropped();
    });
    markReceived();
    await released;
    if (res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(ANSWER));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/restart`,
    received,
    dropped,
    release,
    async close() {
      release();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** The audit's workflow: three independent stages, one of which fails and one of which is slow. */
async function createThreeStages(h: Harness, me: Owner, url: string, { good = true } = {}) {
  const name = uniqueName("three");
  await createApprovedWorkflow(h, me.auth, {
    name,
    stages: [
      ...(good ? [{ id: "good", action_type: "json_transform", config: { expression: "1" } }] : []),
      { id: "bad", action_type: "json_transform", config: { expression: '$error("boom")' } },
      { id: "slowgood", action_type: "http_request", config: { url, timeout_ms: 60_000 } },
    ],
  });
  return name;
}

const stageOutput = async (h: Harness, traceId: string, key: string) => {
  const [row] = await h.vigil.services.database.db
    .select({ output: executionNodes.output })
    .from(executionNodes)
    .where(and(eq(executionNodes.traceId, traceId), eq(executionNodes.key, key)));
  return row?.output;
};

const httpOutput = { status: 200, content_type: "application/json", body: ANSWER, truncated: false };

// No workers here (VIGIL_ROLE api): the test delivers each stage's job itself, in the order it wants.
describeEachEngine(
  "a failing stage, stages delivered by hand",
  (harness) => {
    const deliverer = (h: Harness, traceId: string) => (stageId: string) =>
      runStage({
        ctx: workContext(h.vigil.services, h.vigil.log),
        enqueueStage: (tx, data) => h.vigil.services.queue.enqueue(tx, runStageJob, data),
        data: { traceId, stageId },
        attempt: 1,
        lastAttempt: false,
      });

    it("lets a stage under way finish with its own result and settles the run only then", async () => {
      const h = harness();
      const me = await h.createKey();
      const held = await startHeldServer();
      try {
        const name = await createThreeStages(h, me, held.url);
        const started = await startAs(h, me, { target: { type: "workflow", name } });
        const deliver = deliverer(h, started.traceId);

        const slow = deliver("slowgood");
        await held.received;
        expect(await deliver("bad")).toBe("failed");
        // The failure is recorded; the slow stage still runs, so the trace is not settled.
        const draining = await readTrace(h, me.auth, started.traceId);
        expect(draining.execution).toMatchObject({ status: "running", trace_settled: false, error: null });
        expect(draining.nodes).toEqual([
          node("stage:good", "stage", "good", "skipped", { attempt: 0, error: "skipped: stage bad failed" }),
          node("stage:bad", "stage", "bad", "error", { error: FAILURE }),
          node("stage:slowgood", "stage", "slowgood", "running"),
          node("stage:bad/action:json_transform", "action", "json_transform", "error", { error: FAILURE }),
          node("stage:slowgood/action:http_request", "action", "http_request", "running"),
        ]);
        // A stage not started when the failure came never starts.
        expect(await deliver("good")).toBe("duplicate");

        held.release();
        expect(await slow).toBe("completed");
        const settled = await readTrace(h, me.auth, started.traceId);
        expect(settled.execution).toMatchObject({
          status: "error",
          trace_settled: true,
          cancelled: false,
          error: `stage bad failed: ${FAILURE}`,
        });
        expect(settled.nodes).toEqual([
          node("stage:good", "stage", "good", "skipped", { attempt: 0, error: "skipped: stage bad failed" }),
          node("stage:bad", "stage", "bad", "error", { error: FAILURE }),
          node("stage:slowgood", "stage", "slowgood", "success"),
          node("stage:bad/action:json_transform", "action", "json_transform", "error", { error: FAILURE }),
          node("stage:slowgood/action:http_request", "action", "http_request", "success"),
        ]);
        expect(settled.structured_output.summary).toBe(`stage bad failed: ${FAILURE}`);
        expect(await stageOutput(h, started.traceId, "stage:slowgood")).toEqual(httpOutput);
        // Settled is final: a late delivery changes nothing.
        expect(await deliver("slowgood")).toBe("duplicate");
        expect(await readTrace(h, me.auth, started.traceId)).toEqual(settled);
      } finally {
        await held.close();
      }
    });

    it("keeps the own error of a stage under way that fails after another, the run naming the first", async () => {
      const h = harness();
      const me = await h.createKey();
      const held = await startHeldServer({ status: 400 });
      try {
        const name = await createThreeStages(h, me, held.url, { good: false });
        const started = await startAs(h, me, { target: { type: "workflow", name } });
        const deliver = deliverer(h, started.traceId);
        const slow = deliver("slowgood");
        await held.received;
        expect(await deliver("bad")).toBe("failed");
        held.release();
        expect(await slow).toBe("failed");
        const own = `http_request: GET ${held.url} answered 400: ${JSON.stringify(ANSWER)}`;
        const settled = await readTrace(h, me.auth, started.traceId);
        expect(settled.execution).toMatchObject({
          status: "error",
          trace_settled: true,
          error: `stage bad failed: ${FAILURE}`,
        });
        expect(settled.nodes).toEqual([
          node("stage:bad", "stage", "bad", "error", { error: FAILURE }),
          node("stage:slowgood", "stage", "slowgood", "error", { error: own }),
          node("stage:bad/action:json_transform", "action", "json_transform", "error", { error: FAILURE }),
          node("stage:slowgood/action:http_request", "action", "http_request", "error", { error: own }),
        ]);
      } finally {
        await held.close();
      }
    });
  },
  { role: "api" },
  { jobs: AUTOMATION_EXECUTION_JOBS },
);

describeEachEngine(
  "a failing stage, on the real queue",
  (harness) => {
    it("shows every stage's real result once the trace settles, the stage and its action agreeing", async () => {
      const h = harness();
      const me = await h.createKey();
      const held = await startHeldServer();
      try {
        const name = await createThreeStages(h, me, held.url);
        const started = await startAs(h, me, { target: { type: "workflow", name } });
        await held.received;
        const draining = await waitFor(async () => {
          const trace = await readTrace(h, me.auth, started.traceId);
          return trace.nodes.some(
            (item: { id: string; state: string }) => item.id === "stage:bad" && item.state === "error",
          )
            ? trace
            : undefined;
        });
        expect(draining.execution).toMatchObject({ status: "running", trace_settled: false });
        held.release();
        const settled = await settledTrace(h, me.auth, started.traceId);
        expect(settled.execution).toMatchObject({ status: "error", error: `stage bad failed: ${FAILURE}` });
        // `good` ran or not depending on whether a worker took it before `bad` failed; either way
        // its stage node and its action say the same.
        const good = settled.nodes.find((item: { id: string }) => item.id === "stage:good");
        const goodNodes =
          good.state === "success"
            ? [node("stage:good", "stage", "good", "success")]
            : [
                node("stage:good", "stage", "good", "skipped", {
                  attempt: 0,
                  error: "skipped: stage bad failed",
                }),
              ];
        const goodAction =
          good.state === "success"
            ? [node("stage:good/action:json_transform", "action", "json_transform", "success")]
            : [];
        expect(settled.nodes).toEqual([
          ...goodNodes,
          node("stage:bad", "stage", "bad", "error", { error: FAILURE }),
          node("stage:slowgood", "stage", "slowgood", "success"),
          ...goodAction,
          node("stage:bad/action:json_transform", "action", "json_transform", "error", { error: FAILURE }),
          node("stage:slowgood/action:http_request", "action", "http_request", "success"),
        ]);
        expect(await stageOutput(h, started.traceId, "stage:slowgood")).toEqual(httpOutput);
      } finally {
        await held.close();
      }
    });

    it("still cancels a stage under way after another failed when the session is terminated", async () => {
      const h = harness();
      const me = await h.createKey();
      const held = await startHeldServer();
      // The failing stage's request is held too, and refused (400, not retried) only once the slow
      // stage's request arrived: which stage's job a worker claims first decides nothing.
      const gate = await startHeldServer({ status: 400 });
      try {
        const name = uniqueName("gated");
        await createApprovedWorkflow(h, me.auth, {
          name,
          stages: [
            { id: "bad", action_type: "http_request", config: { url: gate.url, timeout_ms: 60_000 } },
            { id: "slowgood", action_type: "http_request", config: { url: held.url, timeout_ms: 60_000 } },
          ],
        });
        const started = await startAs(h, me, { target: { type: "workflow", name } });
        await Promise.all([held.received, gate.received]);
        gate.release();
        await waitFor(async () => {
          const trace = await readTrace(h, me.auth, started.traceId);
          return trace.nodes.some(
            (item: { id: string; state: string }) => item.id === "stage:bad" && item.state === "error",
          )
            ? true
            : undefined;
        });
        const terminate = `/platform/api/v1/sessions/${started.sessionId}/terminate?reason=operator%20stop`;
        const terminated = await call(h, me.auth, "POST", terminate);
        expect(terminated.json()).toEqual({ cancelled_workflows: 1 });
        const cancelled = await readTrace(h, me.auth, started.traceId);
        expect(cancelled.execution).toMatchObject({
          status: "error",
          trace_settled: true,
          cancelled: true,
          error: "cancelled: operator stop",
        });
        const refused = expect.stringContaining("answered 400");
        expect(cancelled.nodes).toEqual([
          node("stage:bad", "stage", "bad", "error", { error: refused }),
          node("stage:slowgood", "stage", "slowgood", "error", { error: "cancelled: operator stop" }),
          node("stage:bad/action:http_request", "action", "http_request", "error", { error: refused }),
          node("stage:slowgood/action:http_request", "action", "http_request", "error", {
            error: "cancelled: operator stop",
          }),
        ]);
        // The worker drops the held call; the cancelled run does not change.
        await held.dropped;
        expect(await readTrace(h, me.auth, started.traceId)).toEqual({
          ...cancelled,
          execution: { ...cancelled.execution, duration_ms: expect.any(Number) },
        });
      } finally {
        await held.close();
        await gate.close();
      }
    });
  },
  {},
  { jobs: AUTOMATION_EXECUTION_JOBS },
);
