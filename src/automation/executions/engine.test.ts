// The engine's rules, driven by hand: no workers run here (VIGIL_ROLE api), so each test delivers
// run_stage jobs itself, twice or out of order, and calls the sweeper directly.
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  createApprovedWorkflow,
  type Loopback,
  type Owner,
  readTrace,
  startAs,
  startLoopback,
  uniqueName,
} from "../../../test/automation-runs.ts";
import { describeEachEngine, type Harness } from "../../../test/harness.ts";
import { findActiveKey } from "../../core/auth/keys.ts";
import { type CallerCtx, workContext } from "../../core/context.ts";
import { executionNodes } from "../tables.ts";
import { runStage, unexpectedFailure } from "./engine.ts";
import { cancelExecution } from "./executions.ts";
import { AUTOMATION_EXECUTION_JOBS, runStageJob, WATCH_INTERVAL_SECONDS } from "./jobs.ts";
import { RUN_STAGE_JOB, sweepExecutions } from "./sweeper.ts";

let loopback: Loopback;
beforeAll(async () => {
  loopback = await startLoopback();
});
afterAll(async () => {
  await loopback.close();
});

describeEachEngine(
  "execution engine",
  (harness) => {
    const deliver = (h: Harness, traceId: string, stageId: string, attempt = 1, lastAttempt = false) =>
      runStage({
        ctx: workContext(h.vigil.services, h.vigil.log),
        enqueueStage: (tx, data) => h.vigil.services.queue.enqueue(tx, runStageJob, data),
        data: { traceId, stageId },
        attempt,
        lastAttempt,
      });

    const state = async (h: Harness, traceId: string) => {
      const rows = await h.vigil.services.database.db
        .select({ key: executionNodes.key, status: executionNodes.status, attempt: executionNodes.attempt })
        .from(executionNodes)
        .where(eq(executionNodes.traceId, traceId));
      return Object.fromEntries(rows.map((row) => [row.key, `${row.status}@${row.attempt}`]));
    };
    const stageJobs = async (h: Harness, traceId: string) => {
      const { rows } = await h.vigil.services.database.db.execute(
        sql`select data->>'stageId' as stage, state::text as state from pgboss.job
            where name = ${RUN_STAGE_JOB} and data->>'traceId' = ${traceId} order by data->>'stageId'`,
      );
      return rows.map((row) => `${row.stage}:${row.state}`);
    };
    const status = async (h: Harness, owner: Owner, traceId: string) =>
      (await readTrace(h, owner.auth, traceId)).execution;

    it("stores a step's answer holding text PostgreSQL cannot store, with U+FFFD in its place, calling once", async () => {
      const h = harness();
      const me = await h.createKey();
      const name = uniqueName("nul");
      await createApprovedWorkflow(h, me.auth, {
        name,
        stages: [{ id: "fetch", action_type: "http_request", config: { url: `${loopback.url}/nul` } }],
      });
      const started = await startAs(h, me, { target: { type: "workflow", name } });
      const before = loopback.hits.get("/nul") ?? 0;
      expect(await deliver(h, started.traceId, "fetch")).toBe("completed");
      expect((loopback.hits.get("/nul") ?? 0) - before).toBe(1);
      const trace = await readTrace(h, me.auth, started.traceId);
      expect(trace.execution.status).toBe("completed");
      const [step] = await h.vigil.services.database.db
        .select({ output: executionNodes.output })
        .from(executionNodes)
        .where(
          and(
            eq(executionNodes.traceId, started.traceId),
            eq(executionNodes.key, "stage:fetch/action:http_request"),
          ),
        );
      expect(step?.output).toMatchObject({
        status: 200,
        body: { message: "disk \ufffd full", note: "\ufffd" },
      });
    });

    it("fails a stage once, naming the database's reason without the query, when Vigil's write is refused for good", async () => {
      const h = harness();
      const refused = await h.vigil.services.database.db
        .execute(sql`select 1 / 0`)
        .catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(Error);
      expect(String((refused as Error).message)).toContain("select 1 / 0");
      const failure = unexpectedFailure(refused);
      expect({ message: failure.message, retryable: failure.retryable }).toEqual({
        message: "the step's result could not be recorded: division by zero",
        retryable: false,
      });
      // Anything else a stage throws is tried again, as before.
      expect(unexpectedFailure(new Error("socket hang up")).retryable).toBe(true);
    });

    it("does the work of a stage once when its job is delivered twice", async () => {
      const h = harness();
      const me = await h.createKey();
      const name = uniqueName("once");
      await createApprovedWorkflow(h, me.auth, {
        name,
        stages: [{ id: "fetch", action_type: "http_request", config: { url: `${loopback.url}/ok` } }],
      });
      const started = await startAs(h, me, { target: { type: "workflow", name } });
      expect(await stageJobs(h, started.traceId)).toEqual(["fetch:created"]);
      const before = loopback.hits.get("/ok") ?? 0;
      const outcomes = await Promise.all([
        deliver(h, started.traceId, "fetch"),
        deliver(h, started.traceId, "fetch"),
      ]);
      expect(outcomes.sort()).toEqual(["completed", "duplicate"]);
      expect((loopback.hits.get("/ok") ?? 0) - before).toBe(1);
      // Late duplicates, of this attempt or a later one, find the stage done.
      expect(await deliver(h, started.traceId, "fetch")).toBe("duplicate");
      expect(await deliver(h, started.traceId, "fetch", 2)).toBe("duplicate");
      expect((loopback.hits.get("/ok") ?? 0) - before).toBe(1);
      expect(await status(h, me, started.traceId)).toMatchObject({
        status: "completed",
        trace_settled: true,
      });
    });

    it("keys a retry by attempt: the same attempt again does nothing, the next one runs", async () => {
      const h = harness();
      const me = await h.createKey();
      const name = uniqueName("retry");
      await createApprovedWorkflow(h, me.auth, {
        name,
        stages: [{ id: "fetch", action_type: "http_request", config: { url: `${loopback.url}/fail` } }],
      });
      const started = await startAs(h, me, { target: { type: "workflow", name } });
      const before = loopback.hits.get("/fail") ?? 0;
      await expect(deliver(h, started.traceId, "fetch", 1)).rejects.toThrow("answered 500");
      expect(await state(h, started.traceId)).toEqual({
        "stage:fetch": "running@1",
        "stage:fetch/action:http_request": "error@1",
      });
      expect(await deliver(h, started.traceId, "fetch", 1)).toBe("duplicate");
      expect(await deliver(h, started.traceId, "fetch", 2, true)).toBe("failed");
      expect((loopback.hits.get("/fail") ?? 0) - before).toBe(2);
      expect(await state(h, started.traceId)).toEqual({
        "stage:fetch": "error@2",
        "stage:fetch/action:http_request": "error@2",
      });
      expect(await status(h, me, started.traceId)).toMatchObject({ status: "error", trace_settled: true });
    });

    it("sends a joined stage exactly once when the stages it waits for finish together", async () => {
      const h = harness();
      const me = await h.createKey();
      const name = uniqueName("join");
      const step = (id: string, dependsOn: string[]) => ({
        id,
        action_type: "json_transform",
        depends_on: dependsOn,
        config: { expression: `"${id}"` },
      });
      await createApprovedWorkflow(h, me.auth, {
        name,
        stages: [step("a", []), step("b", ["a"]), step("c", ["a"]), step("d", ["b", "c"])],
      });
      const started = await startAs(h, me, { target: { type: "workflow", name } });
      expect(await deliver(h, started.traceId, "a")).toBe("completed");
      expect(await stageJobs(h, started.traceId)).toEqual(["a:created", "b:created", "c:created"]);
      // b and c finish at the same moment; exactly one of them sends d.
      expect(await Promise.all([deliver(h, started.traceId, "b"), deliver(h, started.traceId, "c")])).toEqual(
        ["completed", "completed"],
      );
      expect(await stageJobs(h, started.traceId)).toEqual([
        "a:created",
        "b:created",
        "c:created",
        "d:created",
      ]);
      expect(await deliver(h, started.traceId, "d")).toBe("completed");
      expect(await status(h, me, started.traceId)).toMatchObject({
        status: "completed",
        trace_settled: true,
      });
      const trace = await readTrace(h, me.auth, started.traceId);
      expect(trace.structured_output).toEqual({
        summary: "d",
        impact: "",
        recommendations: "",
        confidence: "",
      });
    });

    it("does nothing for a job delivered after the run was cancelled", async () => {
      const h = harness();
      const me = await h.createKey();
      const name = uniqueName("cancel");
      await createApprovedWorkflow(h, me.auth, {
        name,
        stages: [{ id: "a", action_type: "json_transform", config: { expression: "1" } }],
      });
      const started = await startAs(h, me, { target: { type: "workflow", name } });
      const found = await findActiveKey(h.vigil.services.database.db, me.key);
      const ctx: CallerCtx = {
        ...workContext(h.vigil.services, h.vigil.log),
        actor: { userId: found?.userId ?? "", keyId: found?.keyId ?? "", scopes: [], orgId: null },
      };
      expect(await cancelExecution({ ctx, input: { traceId: started.traceId, reason: "test" } })).toBe(true);
      expect(await cancelExecution({ ctx, input: { traceId: started.traceId } })).toBe(false);
      expect(await deliver(h, started.traceId, "a")).toBe("duplicate");
      expect(await state(h, started.traceId)).toEqual({ "stage:a": "skipped@0" });
      expect(await status(h, me, started.traceId)).toMatchObject({
        status: "error",
        cancelled: true,
        error: "cancelled: test",
        trace_settled: true,
      });
    });

    it("sweeps a run whose stage job failed or vanished, and leaves healthy runs alone", async () => {
      const h = harness();
      const me = await h.createKey();
      const name = uniqueName("swept");
      await createApprovedWorkflow(h, me.auth, {
        name,
        stages: [
          { id: "a", action_type: "json_transform", config: { expression: "1" } },
          { id: "b", action_type: "json_transform", depends_on: ["a"], config: { expression: "2" } },
        ],
      });
      const { database, queue, now } = h.vigil.services;
      const failed = await startAs(h, me, { target: { type: "workflow", name } });
      const vanished = await startAs(h, me, { target: { type: "workflow", name } });
      const healthy = await startAs(h, me, { target: { type: "workflow", name } });
      // Each run carries its watchdog, due a minute later.
      const { rows: watchdogs } = await database.db.execute(
        sql`select count(*)::int as n from pgboss.job where name = 'automation.watch_execution'
            and data->>'traceId' = ${failed.traceId}
            and start_after > now() + make_interval(secs => ${WATCH_INTERVAL_SECONDS - 10})`,
      );
      expect(Number(watchdogs[0]?.n)).toBe(1);
      expect(await sweepExecutions({ db: database.db, now })).toEqual([]);

      const jobOf = async (traceId: string) => {
        const [row] = await database.db
          .select({ jobId: executionNodes.jobId })
          .from(executionNodes)
          .where(and(eq(executionNodes.traceId, traceId), eq(executionNodes.key, "stage:a")));
        if (!row?.jobId) throw new Error("stage a has no job");
        return row.jobId;
      };
      // pg-boss gave up on one (out of retries, or expired on a dead worker); another job is gone.
      await database.db.execute(
        sql`update pgboss.job set state = 'failed' where id = ${await jobOf(failed.traceId)}`,
      );
      await queue.boss.deleteJob(RUN_STAGE_JOB, await jobOf(vanished.traceId));
      expect((await sweepExecutions({ db: database.db, now })).sort()).toEqual(
        [failed.traceId, vanished.traceId].sort(),
      );
      expect(await sweepExecutions({ db: database.db, now })).toEqual([]);

      const trace = await readTrace(h, me.auth, failed.traceId);
      expect(trace.execution).toMatchObject({
        status: "error",
        trace_settled: true,
        error: "stage a did not finish: its job failed (expired or out of retries)",
      });
      expect(
        trace.nodes.map((item: { id: string; state: string; error: string }) => [
          item.id,
          item.state,
          item.error,
        ]),
      ).toEqual([
        ["stage:a", "error", "stage a: its job failed (expired or out of retries)"],
        ["stage:b", "skipped", "skipped: stage a did not finish"],
      ]);
      expect(await status(h, me, vanished.traceId)).toMatchObject({
        status: "error",
        error: "stage a did not finish: its job is gone",
      });
      expect(await status(h, me, healthy.traceId)).toMatchObject({ status: "running", trace_settled: false });
    });
  },
  { role: "api" },
  { jobs: AUTOMATION_EXECUTION_JOBS },
);
