// On PostgreSQL, where a PUT of the app and a delete of a name it binds run at once. The PUT reads the
// integrations and workflows it names FOR SHARE before it locks the installation, the order a delete
// takes them in (its own row, then the bindings): either the delete ends first and the PUT refuses the
// name, or the delete waits for the PUT to commit and then takes the name out. Either way the record
// as read is a valid PUT. Also the install a delivery reads in the middle of: the next one takes it.
// (PGlite runs one transaction at a time: none of this can interleave there.)
import { sql } from "drizzle-orm";
import type { Logger } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { amBody, deliver, registerAlerts, triggerPathOf } from "../../test/alerts.ts";
import { call, ENGINES, type Harness, startHarness, waitFor } from "../../test/harness.ts";
import { deleteWorkflow } from "../automation/workflows/workflows.ts";
import { type CallerCtx, workContext } from "../core/context.ts";
import type { Tx } from "../core/db/database.ts";
import { deleteIntegration } from "../integrations/integrations.ts";
import { ensureAppInstalled, putApp } from "./installations.ts";

type Key = Awaited<ReturnType<Harness["createKey"]>>;
type Answer = Awaited<ReturnType<typeof call>>;
/** A request sent and not yet answered. */
type Pending = { answer: Promise<Answer>; ended: () => boolean };

describe.runIf(ENGINES.includes("postgres"))(
  "the app's bindings beside a delete of a name they hold [postgres]",
  () => {
    let h: Harness & { stop(): Promise<void> };
    beforeAll(async () => {
      h = await startHarness("postgres");
    });
    afterAll(async () => {
      await h?.stop();
    });

    /** A new org and a key of it with every scope. */
    async function workspace() {
      const orgId = await h.createOrg();
      const key = await h.createKey({ orgIds: [orgId] });
      return { orgId, key, q: `?orgId=${orgId}` };
    }

    /** The context a request of `key` in `orgId` gets, its work joining `tx`. */
    async function callerIn(tx: Tx, key: Key, orgId: string): Promise<CallerCtx> {
      const { rows } = await h.vigil.services.database.db.execute(
        sql`select user_id, scopes from api_keys where id = ${key.id}`,
      );
      const [row] = rows as { user_id: string; scopes: string[] }[];
      if (!row) throw new Error(`no key ${key.id}`);
      return {
        ...workContext(h.vigil.services, h.vigil.app.log as unknown as Logger),
        db: tx,
        actor: { userId: row.user_id, keyId: key.id, scopes: row.scopes, orgId },
      };
    }

    /** Sends `request` and waits until it waits on a row lock (a backend of this database), or ends. */
    async function sentAndBlocked(request: Promise<Answer>): Promise<Pending> {
      let ended = false;
      void request.then(
        () => {
          ended = true;
        },
        () => {
          ended = true;
        },
      );
      await waitFor(async () => {
        if (ended) return true;
        const { rows } = await h.vigil.services.database.db.execute(
          sql`select 1 from pg_stat_activity where datname = current_database()
            and wait_event_type = 'Lock' and wait_event in ('transactionid', 'tuple')`,
        );
        return rows.length > 0 ? true : undefined;
      });
      return { answer: request, ended: () => ended };
    }

    async function createIntegrations(key: Key, q: string, names: string[]) {
      for (const name of names) {
        const made = await call(h, key.auth, "POST", `/api/v1/integrations${q}`, {
          name,
          type: "prometheus",
        });
        expect(made.statusCode, made.body).toBe(201);
      }
    }

    async function createWorkflows(key: Key, q: string, names: string[]) {
      for (const name of names) {
        const made = await call(h, key.auth, "POST", `/platform/api/v1/workflows${q}`, {
          name,
          stages: [{ id: "s", action_type: "json_transform", config: { expression: "input" } }],
        });
        expect(made.statusCode, made.body).toBe(201);
        const approve = `/platform/api/v1/workflows/${name}/versions/1/approve${q}`;
        expect((await call(h, key.auth, "POST", approve)).statusCode).toBe(200);
      }
    }

    const workflowBody = {
      attached_workflows: ["keep-flow", "doomed-flow"],
      workflow_assignments: [
        { purpose: "alert_investigation", workflow_name: "doomed-flow", is_default: true },
      ],
    };

    it("an integration delete in flight ends first: the PUT waits for it, then answers 400 naming the name", async () => {
      const { orgId, key, q } = await workspace();
      await createIntegrations(key, q, ["keep", "doomed"]);
      const app = `/api/v1/apps/sre${q}`;
      const installed = await call(h, key.auth, "PUT", app, { integrations: ["keep"] });
      expect(installed.statusCode, installed.body).toBe(200);
      let put: Pending | undefined;
      await h.vigil.services.database.transaction(async (tx) => {
        // DELETE /api/v1/integrations/doomed's own work, held open.
        await deleteIntegration({ ctx: await callerIn(tx, key, orgId), input: { name: "doomed" } });
        put = await sentAndBlocked(call(h, key.auth, "PUT", app, { integrations: ["keep", "doomed"] }));
        expect(put.ended()).toBe(false);
      });
      const answer = await put?.answer;
      expect(answer?.statusCode, answer?.body).toBe(400);
      expect(answer?.json()).toMatchObject({
        error: "integrations.1: integration doomed does not exist",
        code: "VALIDATION_FAILED",
        details: { field: "integrations.1" },
      });
      expect((await call(h, key.auth, "GET", app)).json()).toEqual(installed.json());
    });

    it("an integration delete behind a first PUT waits for its commit, then takes the name out", async () => {
      const { orgId, key, q } = await workspace();
      await createIntegrations(key, q, ["keep", "doomed"]);
      let deleted: Pending | undefined;
      await h.vigil.services.database.transaction(async (tx) => {
        const put = await putApp({
          ctx: await callerIn(tx, key, orgId),
          input: { appName: "sre", body: { integrations: ["keep", "doomed"] } },
        });
        expect(put.integrations).toEqual(["keep", "doomed"]);
        deleted = await sentAndBlocked(call(h, key.auth, "DELETE", `/api/v1/integrations/doomed${q}`));
        expect(deleted.ended()).toBe(false);
      });
      expect((await deleted?.answer)?.statusCode).toBe(204);
      const record = (await call(h, key.auth, "GET", `/api/v1/apps/sre${q}`)).json();
      expect(record).toMatchObject({ configured: true, integrations: ["keep"] });
    });

    it("a workflow delete in flight ends first: the PUT waits for it, then answers 400 naming the name", async () => {
      const { orgId, key, q } = await workspace();
      await createWorkflows(key, q, ["keep-flow", "doomed-flow"]);
      const app = `/api/v1/apps/sre${q}`;
      const installed = await call(h, key.auth, "PUT", app, { attached_workflows: ["keep-flow"] });
      expect(installed.statusCode, installed.body).toBe(200);
      let put: Pending | undefined;
      await h.vigil.services.database.transaction(async (tx) => {
        // DELETE /platform/api/v1/workflows/doomed-flow's own work, held open.
        await deleteWorkflow({ ctx: await callerIn(tx, key, orgId), input: { name: "doomed-flow" } });
        put = await sentAndBlocked(call(h, key.auth, "PUT", app, workflowBody));
        expect(put.ended()).toBe(false);
      });
      const answer = await put?.answer;
      expect(answer?.statusCode, answer?.body).toBe(400);
      expect(answer?.json()).toMatchObject({
        error: "attached_workflows.1: workflow doomed-flow does not exist",
        details: { field: "attached_workflows.1" },
      });
      expect((await call(h, key.auth, "GET", app)).json()).toEqual(installed.json());
      // The assignment alone is refused the same way, now that the workflow is gone.
      const assigned = await call(h, key.auth, "PUT", app, {
        workflow_assignments: workflowBody.workflow_assignments,
      });
      expect(assigned.json()).toMatchObject({ details: { field: "workflow_assignments.0.workflow_name" } });
    });

    it("a workflow delete behind a first PUT waits for its commit, then takes it out of the attached workflows and the assignments", async () => {
      const { orgId, key, q } = await workspace();
      await createWorkflows(key, q, ["keep-flow", "doomed-flow"]);
      let deleted: Pending | undefined;
      await h.vigil.services.database.transaction(async (tx) => {
        const put = await putApp({
          ctx: await callerIn(tx, key, orgId),
          input: { appName: "sre", body: workflowBody },
        });
        expect(put.attached_workflows).toEqual(["keep-flow", "doomed-flow"]);
        const path = `/platform/api/v1/workflows/doomed-flow${q}`;
        deleted = await sentAndBlocked(call(h, key.auth, "DELETE", path));
        expect(deleted.ended()).toBe(false);
      });
      expect((await deleted?.answer)?.statusCode).toBe(204);
      const record = (await call(h, key.auth, "GET", `/api/v1/apps/sre${q}`)).json();
      expect(record).toMatchObject({
        configured: true,
        attached_workflows: ["keep-flow"],
        workflow_assignments: [],
      });
    });

    it("a delivery read while an install is uncommitted is refused, and the next one after the commit is taken", async () => {
      const { orgId, key, q } = await workspace();
      const registration = await registerAlerts(h, key.auth, { source: "alertmanager" }, q);
      expect((await call(h, key.auth, "DELETE", `/api/v1/apps/sre${q}`)).statusCode).toBe(204);
      const firing = amBody([
        {
          status: "firing",
          fingerprint: "f00d",
          startsAt: "2026-01-01T00:00:00Z",
          labels: { alertname: "Down" },
        },
      ]);
      await h.vigil.services.database.transaction(async (tx) => {
        const { actor } = await callerIn(tx, key, orgId);
        // A PUT's install, its cache entry dropped and its row not yet committed.
        await ensureAppInstalled(tx, h.vigil.services, {
          tenant: { orgId, ownerId: actor.userId },
          appName: "sre",
          now: new Date(),
        });
        expect((await deliver(h, triggerPathOf(registration), firing)).statusCode).toBe(423);
      });
      const accepted = await deliver(h, triggerPathOf(registration), firing);
      expect(accepted.statusCode, accepted.body).toBe(202);
    });
  },
);
