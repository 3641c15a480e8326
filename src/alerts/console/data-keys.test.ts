// Keys that are data (an alert's labels, a session's source_metadata) come back whatever characters
// they hold: a key with a line break was left out of every answer by the response serializer.
import { beforeAll, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../../test/alerts.ts";
import { type Auth, call, describeEachEngine } from "../../../test/harness.ts";

describeEachEngine("keys that are data", (harness) => {
  let auth: Auth;

  beforeAll(async () => {
    ({ auth } = await harness().createKey());
  });

  it("answers an alert's label whose key holds a line break, in the alert and in the list", async () => {
    const h = harness();
    const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: "keys" });
    const labels = { alertname: "OddKeys", "team\nname": "payments", "tab\tkey": "x" };
    const [id] = await deliverIds(
      h,
      trigger,
      amBody([{ status: "firing", fingerprint: "odd-keys", startsAt: "2026-11-22T10:00:00Z", labels }]),
    );
    expect((await readAlert(h, auth, id as string)).labels).toMatchObject(labels);
    const listed = await call(h, auth, "GET", "/app/sre/api/v1/alerts?integration_names=keys");
    expect(listed.json().alerts[0].labels).toMatchObject(labels);
  });

  it("answers a session's source_metadata whose key holds a line break", async () => {
    const h = harness();
    const metadata = { "ticket\nid": "OPS-1", plain: "yes" };
    const asked = await call(h, auth, "POST", "/platform/api/v1/platform/ask/start", {
      message: "what is firing in payments?",
      source_metadata: metadata,
    });
    expect(asked.statusCode, asked.body).toBe(200);
    const session = await call(h, auth, "GET", `/platform/api/v1/sessions/${asked.json().session_id}`);
    expect(session.statusCode, session.body).toBe(200);
    expect(session.json().source_metadata).toEqual(metadata);
  });
});
