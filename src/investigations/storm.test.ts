// A storm of alerts on a registration with auto_investigate: every alert is ingested, and every one
// eventually gets exactly one investigation from the queued auto_investigate jobs (redelivering the
// storm creates nothing more).
import { expect, it } from "vitest";
import { amBody, deliverAlerts, readAlert, registerTrigger } from "../../test/alerts.ts";
import { call, describeEachEngine, waitFor } from "../../test/harness.ts";

const STORM = 200;
const PER_DELIVERY = 50;

describeEachEngine("an alert storm with auto_investigate", (harness) => {
  it(`${STORM} alerts: all ingested, each investigated exactly once`, async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const trigger = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: `storm-${process.pid}`,
      auto_investigate: true,
    });
    const startsAt = new Date().toISOString();
    const bodies = Array.from({ length: STORM / PER_DELIVERY }, (_, delivery) =>
      amBody(
        Array.from({ length: PER_DELIVERY }, (_, index) => {
          const n = delivery * PER_DELIVERY + index;
          return {
            status: "firing" as const,
            fingerprint: `storm-${process.pid}-${n}`,
            startsAt,
            labels: { alertname: "StormMember", service: `svc-${n % 7}`, instance: `host-${n}` },
          };
        }),
      ),
    );
    const ids = new Set<string>();
    for (const body of bodies) {
      for (const alert of await deliverAlerts(h, trigger, body)) {
        expect(alert.outcome).toBe("created");
        ids.add(alert.id);
      }
    }
    expect(ids.size).toBe(STORM);
    // A redelivery of the whole storm updates nothing new and queues nothing that creates twice.
    for (const body of bodies) await deliverAlerts(h, trigger, body);

    const total = async () =>
      (await call(h, auth, "GET", "/app/sre/api/v1/investigations?page_size=1")).json().total as number;
    await waitFor(async () => ((await total()) >= STORM ? true : undefined), 300_000);
    for (const id of ids) {
      const alert = await readAlert(h, auth, id);
      expect(alert.investigation, id).not.toBeNull();
    }
    expect(await total()).toBe(STORM);
  }, 360_000);
});
