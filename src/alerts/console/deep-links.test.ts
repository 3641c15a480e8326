// getAlertV1 deep links (spec, SRE area rule 2): the path id is the internal alert UUID or the
// source's external_uid, and an external_uid of any length a source may give (up to 128
// characters) links to its alert, for a read, its history and an operator's change alike.
import { beforeAll, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../../test/alerts.ts";
import { type Auth, call, describeEachEngine } from "../../../test/harness.ts";

describeEachEngine("alert deep links", (harness) => {
  let auth: Auth;
  let trigger: string;

  const fire = async (fingerprint: string, startsAt: string) =>
    (
      await deliverIds(
        harness(),
        trigger,
        amBody([
          { status: "firing", fingerprint, startsAt, labels: { alertname: "DeepLink", severity: "warning" } },
        ]),
      )
    )[0] as string;

  beforeAll(async () => {
    ({ auth } = await harness().createKey());
    trigger = await registerTrigger(harness(), auth, { source: "alertmanager", integration: "links" });
  });

  it("an external_uid of 101 to 128 characters links to its alert", async () => {
    const h = harness();
    for (const length of [101, 128]) {
      const uid = `u${"0123456789abcdef".repeat(8)}`.slice(0, length);
      const id = await fire(uid, "2026-11-22T10:00:00Z");
      const read = await call(h, auth, "GET", `/app/sre/api/v1/alerts/${uid}`);
      expect(read.statusCode, read.body).toBe(200);
      expect(read.json()).toMatchObject({ id, external_uid: uid });
      const history = await call(h, auth, "GET", `/app/sre/api/v1/alerts/${uid}/history`);
      expect(history.statusCode, history.body).toBe(200);
      expect(history.json().alert_id).toBe(id);
      const patched = await call(h, auth, "PATCH", `/app/sre/api/v1/alerts/${uid}`, { attention: "others" });
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json()).toMatchObject({ id, attention: "others" });
    }
  });

  it("an id longer than any external_uid is a 400 naming the parameter", async () => {
    const response = await call(harness(), auth, "GET", `/app/sre/api/v1/alerts/${"x".repeat(129)}`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field: "id" } });
  });

  it("an internal id finds its own alert, even when a newer alert's external_uid spells it", async () => {
    const h = harness();
    const id = await fire("original-series", "2026-11-22T10:00:00Z");
    // A source whose own ids are UUIDs sends one equal to the first alert's internal id, later.
    const lookalike = await fire(id, "2026-11-22T11:00:00Z");
    expect(lookalike).not.toBe(id);
    expect(await readAlert(h, auth, id)).toMatchObject({ id, external_uid: "original-series" });
    const history = await call(h, auth, "GET", `/app/sre/api/v1/alerts/${id}/history`);
    expect(history.json().alert_id).toBe(id);
  });

  it("an external_uid two integrations share, triggered at the same time, resolves to the newer alert", async () => {
    const h = harness();
    const body = amBody([
      {
        status: "firing",
        fingerprint: "shared-series",
        startsAt: "2026-11-22T12:00:00Z",
        labels: { alertname: "DeepLink", severity: "warning" },
      },
    ]);
    const created: string[] = [];
    for (const integration of ["tie-1", "tie-2", "tie-3", "tie-4"]) {
      const other = await registerTrigger(h, auth, { source: "alertmanager", integration });
      created.push(...(await deliverIds(h, other, body)));
    }
    for (let read = 0; read < 3; read++) {
      expect(await readAlert(h, auth, "shared-series")).toMatchObject({ id: created.at(-1) });
    }
  });

  it("an external_uid two integrations share resolves to the one still open before a resolved one", async () => {
    const h = harness();
    const firing = (startsAt: string, endsAt?: string) =>
      amBody([
        {
          status: endsAt ? "resolved" : "firing",
          fingerprint: "open-first",
          startsAt,
          ...(endsAt && { endsAt }),
          labels: { alertname: "DeepLink", severity: "warning" },
        },
      ]);
    const [open] = await deliverIds(h, trigger, firing("2026-11-22T12:00:00Z"));
    // Another integration's alert of the same series, triggered later and resolved since.
    const other = await registerTrigger(h, auth, { source: "alertmanager", integration: "retired" });
    await deliverIds(h, other, firing("2026-11-22T13:00:00Z", "2026-11-22T13:05:00Z"));
    expect(await readAlert(h, auth, "open-first")).toMatchObject({ id: open, status: "active" });
  });
});
