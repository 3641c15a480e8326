// getWebhookRun's run_id is either the invocation id or the execution run id the invocation
// started; both are uuids and are found in any letter case, as every other id of the API is.
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { call, describeEachEngine } from "../../test/harness.ts";
import { indexesOfPlan } from "../../test/plans.ts";

const BASE = "/platform/api/v1/webhooks";

describeEachEngine("webhook run lookup", (harness) => {
  it("finds the run by invocation id and by execution run id, in either case", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const integration = await call(h, auth, "POST", "/api/v1/integrations", {
      name: "grafana",
      type: "grafana",
    });
    expect(integration.statusCode, integration.body).toBe(201);
    const agent = await call(h, auth, "POST", "/platform/api/v1/agents", {
      name: "triage",
      kind: "builtin",
      integrations: ["grafana"],
    });
    expect(agent.statusCode, agent.body).toBe(201);
    const created = await call(h, auth, "POST", BASE, {
      name: "pager",
      target_type: "agent",
      target_name: "triage",
    });
    expect(created.statusCode, created.body).toBe(201);
    const webhook = created.json();

    const accepted = await h.vigil.app.inject({
      method: "POST",
      url: `${BASE}/trigger`,
      headers: { authorization: `Bearer ${webhook.token}`, "content-type": "text/plain" },
      payload: "disk full on web-1",
    });
    expect(accepted.statusCode, accepted.body).toBe(202);
    const ids = accepted.json();
    expect(ids).toMatchObject({ webhook_id: webhook.id, target_type: "agent", target_name: "triage" });

    const byInvocation = await call(h, auth, "GET", `${BASE}/${webhook.id}/runs/${ids.invocation_id}`);
    expect(byInvocation.statusCode, byInvocation.body).toBe(200);
    const run = byInvocation.json();
    expect(run).toMatchObject({
      invocation_id: ids.invocation_id,
      run_id: ids.run_id,
      trace_id: ids.trace_id,
      session_id: ids.session_id,
      payload: "disk full on web-1",
    });
    for (const id of [ids.invocation_id.toUpperCase(), ids.run_id, ids.run_id.toUpperCase()]) {
      const response = await call(h, auth, "GET", `${BASE}/${webhook.id}/runs/${id}`);
      expect(response.statusCode, id).toBe(200);
      expect(response.json()).toEqual(run);
    }

    // A body that is not UTF-8 comes back byte for byte, in base64.
    const bytes = Buffer.from([0xff, 0xfe, 0xc3, 0x00, 0x41, 0xe2, 0x82]);
    const binary = await h.vigil.app.inject({
      method: "POST",
      url: `${BASE}/trigger`,
      headers: { authorization: `Bearer ${webhook.token}`, "content-type": "application/octet-stream" },
      payload: bytes,
    });
    expect(binary.statusCode, binary.body).toBe(202);
    const stored = (
      await call(h, auth, "GET", `${BASE}/${webhook.id}/runs/${binary.json().invocation_id}`)
    ).json();
    expect(stored).toMatchObject({ payload_encoding: "base64", payload_bytes: bytes.length });
    expect(Buffer.from(stored.payload, "base64").equals(bytes)).toBe(true);
    expect(run.payload_encoding).toBe("utf8");
  });

  it("keeps only deliveries that started a run in the run-id index, and looks runs up through it", async () => {
    const { database } = harness().vigil.services;
    // Alert deliveries, nearly all of them, have no run id and write no entry in the index.
    const { rows: defined } = await database.db.execute(
      sql`select indexdef from pg_indexes where indexname = 'webhook_invocations_run'`,
    );
    expect(String(defined[0]?.indexdef)).toMatch(/\(run_id\) WHERE \(run_id IS NOT NULL\)$/);
    // getWebhookRun's lookup by invocation id or run id (beside its webhook, whose index serves a
    // webhook with few invocations): the partial index serves the run id, the sequential scan that
    // a nearly empty table invites ruled out.
    const id = "00000000-0000-7000-8000-000000000002";
    const indexes = await database.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      const { rows } = await tx.execute(sql`explain (format json)
        select id from webhook_invocations where id = ${id} or run_id = ${id}`);
      return indexesOfPlan(rows);
    });
    expect(indexes).toContain("webhook_invocations_run");
  });
});
