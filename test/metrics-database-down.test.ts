// /metrics while the database cannot be read: a backlog gauge read from it must not read 0 (an
// alert on a growing queue would go quiet exactly when the database is down). It is left out of
// that scrape, the failure is counted, and the rest of the scrape still answers.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { reportAlertBacklogs } from "../src/alerts/index.ts";
import { migrate } from "../src/core/db/migrate.ts";
import { createMetrics } from "../src/core/http/metrics.ts";
import { createTestDatabase, describeEachEngine, ENGINES, waitFor } from "./harness.ts";

/** The sample lines of `metric` (with or without labels) in a scrape. */
function samples(text: string, metric: string): string[] {
  return text.split("\n").filter((line) => line.startsWith(`${metric} `) || line.startsWith(`${metric}{`));
}

describeEachEngine("metrics while the database does not answer", (harness) => {
  it("leaves the backlog gauges out of the scrape and counts the failures, instead of reading 0", async () => {
    const { app, services } = harness().vigil;
    const scrape = async () => {
      const response = await app.inject({ method: "GET", url: "/metrics" });
      expect(response.statusCode).toBe(200);
      return response.body;
    };
    const before = await scrape();
    expect(samples(before, "vigil_storm_queue_alerts")).toEqual(["vigil_storm_queue_alerts 0"]);
    expect(samples(before, "vigil_alerts_classification")).toHaveLength(2);
    expect(samples(before, "vigil_metrics_read_failures_total")).toContain(
      'vigil_metrics_read_failures_total{gauge="vigil_storm_queue_alerts"} 0',
    );

    // A transaction holds the backlogs' tables: their reads wait behind it, as on a database that
    // has stopped answering.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = false;
    const holding = services.database.transaction(async (tx) => {
      await tx.execute(sql`lock table alert_storm_queue, alerts in access exclusive mode`);
      locked = true;
      await released;
    });
    try {
      await waitFor(async () => (locked ? true : undefined));
      const during = await scrape();
      expect(samples(during, "vigil_storm_queue_alerts")).toEqual([]);
      expect(samples(during, "vigil_alerts_classification")).toEqual([]);
      expect(samples(during, "vigil_metrics_read_failures_total")).toEqual(
        expect.arrayContaining([
          'vigil_metrics_read_failures_total{gauge="vigil_storm_queue_alerts"} 1',
          'vigil_metrics_read_failures_total{gauge="vigil_alerts_classification"} 1',
        ]),
      );
      // The metrics that do not need the database still answer.
      expect(samples(during, "vigil_http_requests_total").length).toBeGreaterThan(0);
    } finally {
      release();
      await holding;
    }
    // Once the database answers again, so do the gauges.
    await waitFor(async () =>
      samples(await scrape(), "vigil_storm_queue_alerts")[0] === "vigil_storm_queue_alerts 0"
        ? true
        : undefined,
    );
  });
});

for (const engine of ENGINES) {
  describe(`metrics once the database is gone [${engine}]`, () => {
    it("leaves the backlog gauges out of the scrape and counts the failures, instead of reading 0", async () => {
      const test = await createTestDatabase(engine);
      try {
        await migrate(test.database.db);
        const metrics = createMetrics();
        reportAlertBacklogs(metrics, test.database.db);
        expect(samples(await metrics.registry.metrics(), "vigil_storm_queue_alerts")).toEqual([
          "vigil_storm_queue_alerts 0",
        ]);
        await test.database.close();
        const after = await metrics.registry.metrics();
        expect(samples(after, "vigil_storm_queue_alerts")).toEqual([]);
        expect(samples(after, "vigil_alerts_classification")).toEqual([]);
        expect(samples(after, "vigil_metrics_read_failures_total")).toEqual([
          'vigil_metrics_read_failures_total{gauge="vigil_storm_queue_alerts"} 1',
          'vigil_metrics_read_failures_total{gauge="vigil_alerts_classification"} 1',
        ]);
      } finally {
        await test.drop();
      }
    });
  });
}
