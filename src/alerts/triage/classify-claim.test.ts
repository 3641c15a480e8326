// Two classification jobs of one bucket at once (a retry beside its first attempt, after a crash):
// the first classifies an alert while the second waits for the alert's row in its claim or in its
// release after the last attempt. The second takes the alert only if it still waits once locked;
// it neither marks it running again (left so for good: no job would store it) nor failed. The
// interleaving needs two connections, so these tests run on PostgreSQL alone.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../../test/alerts.ts";
import { type Auth, ENGINES, type Harness, startHarness, waitFor } from "../../../test/harness.ts";
import { type OpenAiStub, startOpenAiStub } from "../../../test/openai-stub.ts";
import { boundArray } from "../../core/db/bound-array.ts";
import { classifyAlertsJob, LLM_ALERTS_PER_ROUND } from "./classify-job.ts";
import { storeClassifications } from "./store-classifications.ts";
import { setTriageWorkflowPort, triageWorkflowPort } from "./triage-workflow.ts";

const MODEL_REASON = "checked by the model";
const FIRST_REASON = "classified by the first attempt";

describe.runIf(ENGINES.includes("postgres"))(
  "a classification claim beside another job's write [postgres]",
  () => {
    let stub: OpenAiStub;
    let h: Harness & { stop(): Promise<void> };
    beforeAll(async () => {
      stub = await startOpenAiStub();
      stub.script([], {
        content: JSON.stringify({
          attention: "others",
          attention_reason: MODEL_REASON,
          short_summary: "looked at",
        }),
      });
      // With a model, a round marks its alerts running while it waits for the answers.
      h = await startHarness("postgres", {
        llm: { baseUrl: stub.baseUrl, model: "gpt-4o-mini", apiKey: "sk-test" },
      });
    });
    afterAll(async () => {
      await h?.stop();
      await stub?.close();
    });

    /**
     * `count` alerts of a fresh tenant, classified once and then queued again in a bucket of their
     * own, with no job for it; their ids in id order (the order claims lock them).
     */
    async function queuedBucket(name: string, count: number) {
      const { auth } = await h.createKey();
      const url = await registerTrigger(h, auth, {
        source: "alertmanager",
        integration: name,
        classify_mode: "immediate",
      });
      const startsAt = new Date().toISOString();
      const body = amBody(
        Array.from({ length: count }, (_, n) => ({
          status: "firing" as const,
          fingerprint: `${name}-${n}`,
          startsAt,
          labels: { alertname: `ClaimRace${n}`, severity: "warning" },
        })),
      );
      const ids = (await deliverIds(h, url, body)).sort();
      const { db } = h.vigil.services.database;
      const idArray = boundArray(ids, "uuid");
      // Classified, and placed by the correlator: the job's own correlation then touches no row.
      await waitFor(async () => {
        const { rows } = await db.execute(sql`
        select (select count(*) from alerts where id = any(${idArray}) and analysis_status <> 'completed')::int
          + (select count(*) from alert_storm_queue where alert_id = any(${idArray}))::int as pending`);
        return rows[0]?.pending === 0 ? true : undefined;
      });
      const bucket = `manual:${name}`;
      await db.execute(
        sql`update alerts set analysis_status = 'queued', triage_bucket = ${bucket} where id = any(${idArray})`,
      );
      const { rows } = await db.execute(sql`select owner_id from alerts where id = ${ids[0]}`);
      const data = { orgId: null, ownerId: String(rows[0]?.owner_id), buckets: [bucket] };
      return { auth, ids, bucket, data };
    }

    /**
     * Runs `second` while a transaction classifies `first` as the first attempt's round does (locked,
     * written, its history event added), and commits once `second` waits for the row in the
     * statement whose text contains `statement` (in its first 1 KiB: what PostgreSQL shows of a
     * query by default). Answers when `second` is done.
     */
    async function beside(
      first: { id: string; bucket: string },
      statement: string,
      second: () => Promise<void>,
    ) {
      const { database } = h.vigil.services;
      let running: Promise<void> | undefined;
      await database.transaction(async (tx) => {
        await storeClassifications(
          tx,
          [
            {
              id: first.id,
              bucket: first.bucket,
              attention: "others",
              reason: FIRST_REASON,
              summary: "first attempt",
              investigation: null,
              detail: { step: "first attempt" },
            },
          ],
          new Date(),
          { locked: true },
        );
        running = second();
        // Kept from failing the test before the commit; awaited below.
        running.catch(() => {});
        await waitFor(async () => {
          const { rows } = await database.db.execute(sql`
          select 1 from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and position(${statement} in query) > 0`);
          return rows.length > 0 ? true : undefined;
        });
      });
      await running;
    }

    async function statesOf(ids: string[]) {
      const { rows } = await h.vigil.services.database.db.execute(sql`
      select id, analysis_status, triage_bucket, attention_reason from alerts
      where id = any(${boundArray(ids, "uuid")}) order by id`);
      return rows;
    }

    async function summaryOf(auth: Auth) {
      const response = await h.vigil.app.inject({
        url: "/app/sre/api/v1/alerts/categorization/summary",
        headers: auth,
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    }

    function jobContext() {
      const { services } = h.vigil;
      return {
        ...services,
        db: services.database.db,
        log: h.vigil.log,
        enqueue: services.queue.enqueue,
        enqueueMany: services.queue.enqueueMany,
      };
    }

    it("does not mark running an alert classified while its claim waited, and goes on past it", async () => {
      // One round more than the model's: the round that passes over the first alert still locked a
      // full round, so the rest of the bucket is handed on to a new job.
      const { auth, ids, bucket, data } = await queuedBucket("claim-race", LLM_ALERTS_PER_ROUND + 1);
      const [first] = ids as [string];
      await beside({ id: first, bucket }, "set analysis_status = 'running'", () =>
        classifyAlertsJob.handler({ ctx: jobContext(), data, attempt: 1 }),
      );
      expect((await statesOf([first]))[0]).toEqual({
        id: first,
        analysis_status: "completed",
        triage_bucket: null,
        attention_reason: FIRST_REASON,
      });
      expect((await readAlert(h, auth, first)).analysis_status).toBe("completed");
      // The last alert, past the first round, is classified by the job the round handed on to.
      await waitFor(async () => {
        const states = await statesOf(ids);
        return states.every((row) => row.analysis_status === "completed") ? true : undefined;
      });
      expect(await statesOf(ids)).toEqual(
        ids.map((id) => ({
          id,
          analysis_status: "completed",
          triage_bucket: null,
          attention_reason: id === first ? FIRST_REASON : MODEL_REASON,
        })),
      );
      expect(await summaryOf(auth)).toEqual({
        total_active: ids.length,
        not_started: 0,
        in_progress: 0,
        completed: ids.length,
        failed: 0,
        is_running: false,
      });
    });

    it("does not mark failed an alert classified while the last attempt's release waited", async () => {
      const { auth, ids, bucket, data } = await queuedBucket("release-race", 3);
      const [first] = ids as [string];
      // The last attempt fails before it claims anything: the tenant's triage workflow cannot be read.
      const appPort = triageWorkflowPort();
      const unset = setTriageWorkflowPort({
        choose: async () => {
          throw new Error("workflows unavailable");
        },
        start: async () => "trace",
      });
      try {
        await beside({ id: first, bucket }, "analysis_status = 'failed'", () =>
          classifyAlertsJob.handler({ ctx: jobContext(), data, attempt: 4 }),
        );
      } finally {
        if (appPort) setTriageWorkflowPort(appPort);
        else unset();
      }
      expect(await statesOf(ids)).toEqual(
        ids.map((id) =>
          id === first
            ? { id, analysis_status: "completed", triage_bucket: null, attention_reason: FIRST_REASON }
            : { id, analysis_status: "failed", triage_bucket: bucket, attention_reason: MODEL_REASON },
        ),
      );
      expect(await summaryOf(auth)).toEqual({
        total_active: 3,
        not_started: 0,
        in_progress: 0,
        completed: 1,
        failed: 2,
        is_running: false,
      });
    });
  },
);
