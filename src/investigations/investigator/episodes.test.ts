// An investigation reads an alert's episodes by the source's times: three half-hour episodes that
// Alertmanager delivers seconds apart (a replay, a sender catching up) are no flapping rule, while
// three two-minute ones are. The alert's own earlier episodes are its closest prior incidents.
import { expect, it } from "vitest";
import { amBody, deliverIds, registerTrigger } from "../../../test/alerts.ts";
import { type Auth, call, describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";

const FLAPPING = "re-fires and auto-resolves repeatedly";

/** Delivers three episodes of `lengthMs` each, an hour apart, in quick succession; answers the alert's id. */
async function deliverEpisodes(h: Harness, trigger: string, fingerprint: string, lengthMs: number) {
  const labels = { alertname: "DiskLatencyHigh", service: "ledger", instance: "db-3:9100" };
  const firstStart = Date.now() - 4 * 3_600_000;
  const ids: string[] = [];
  for (let episode = 0; episode < 3; episode++) {
    const startsAt = new Date(firstStart + episode * 3_600_000).toISOString();
    const endsAt = new Date(firstStart + episode * 3_600_000 + lengthMs).toISOString();
    await deliverIds(h, trigger, amBody([{ status: "firing", fingerprint, startsAt, labels }]));
    ids.push(
      ...(await deliverIds(
        h,
        trigger,
        amBody([{ status: "resolved", fingerprint, startsAt, endsAt, labels }]),
      )),
    );
  }
  expect(new Set(ids).size).toBe(1);
  return ids[0] as string;
}

async function investigate(h: Harness, auth: Auth, alertId: string) {
  const started = await call(h, auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`);
  expect(started.statusCode, started.body).toBe(200);
  const id = started.json().investigation.id as string;
  return waitFor(async () => {
    const body = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
    return ["completed", "failed", "cancelled"].includes(body.status) ? body : undefined;
  }, 60_000);
}

describeEachEngine("an investigation reads the alert's episodes", (harness) => {
  it("half-hour episodes delivered seconds apart are not flapping", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const trigger = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: `ep-${process.pid}`,
    });
    const id = await deliverEpisodes(h, trigger, `long-${process.pid}`, 30 * 60_000);
    const done = await investigate(h, auth, id);
    expect(done.status).toBe("completed");
    const statements = done.hypotheses.map((hypothesis: { statement: string }) => hypothesis.statement);
    expect(statements.join("\n")).not.toContain(FLAPPING);
  }, 90_000);

  it("two-minute episodes are flapping, counted by the source's times", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const trigger = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: `ep-${process.pid}`,
    });
    const id = await deliverEpisodes(h, trigger, `short-${process.pid}`, 2 * 60_000);
    const done = await investigate(h, auth, id);
    expect(done.status).toBe("completed");
    const flapping = done.hypotheses.find((hypothesis: { statement: string }) =>
      hypothesis.statement.includes(FLAPPING),
    );
    expect(flapping?.rationale).toBe("2 re-fires, 3 resolves within 5 minutes of firing");
    // Its own two earlier episodes lead the prior incidents, newest first, with their source times.
    const own = done.prior_incidents.filter(
      (incident: { why_matched: string }) => incident.why_matched === "an earlier episode of this alert",
    );
    expect(own).toHaveLength(2);
    expect(done.prior_incidents.slice(0, 2)).toEqual(own);
    for (const incident of own) {
      expect(incident).toMatchObject({
        alert_id: id,
        match: "same_series",
        resolution: "resolved by the source after 2 min",
      });
      expect(Date.parse(incident.resolved_at) - Date.parse(incident.triggered_at)).toBe(2 * 60_000);
    }
    expect(Date.parse(own[0].triggered_at) - Date.parse(own[1].triggered_at)).toBe(3_600_000);
  }, 90_000);
});
