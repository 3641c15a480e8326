// An alert storm with and without auto_investigate: 1,000 alerts (20 Alertmanager deliveries of 50)
// posted one delivery at a time to the real trigger on loopback, on the embedded default (PGlite on
// files), once to a registration without auto_investigate and once to one with it. Prints the
// ingest rate of each, and for the second how long until every alert had its one investigation.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { loadConfig } from "../src/config.ts";
import { startVigil } from "../src/start.ts";

const BOOTSTRAP_KEY = "bench-bootstrap-key-storm-0123456789";
const ALERTS = Number(process.env.BENCH_STORM_ALERTS ?? 1000);
const PER_DELIVERY = 50;
const DEADLINE_MS = 600_000;

export async function runInvestigationsStormBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-bench-"));
  const config = loadConfig(
    {},
    {
      dataDir,
      databaseUrl: null,
      logLevel: "silent",
      secretKey: "bench-secret-key",
      bootstrapApiKey: BOOTSTRAP_KEY,
    },
  );
  const vigil = await startVigil(config);
  const address = await vigil.app.listen({ host: "127.0.0.1", port: 0 });
  const headers = { authorization: `Bearer ${BOOTSTRAP_KEY}`, "content-type": "application/json" };
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${address}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  const totalInvestigations = async () => {
    const response = await fetch(`${address}/app/sre/api/v1/investigations?page_size=1`, { headers });
    return ((await response.json()) as { total: number }).total;
  };
  console.log(
    `investigations-storm bench: ${ALERTS} alerts in deliveries of ${PER_DELIVERY}, PGlite (files), loopback HTTP`,
  );
  try {
    for (const auto of [false, true]) {
      const registration = await post("/app/sre/api/v1/alerts/webhook", {
        source: "alertmanager",
        integration: `storm-${auto ? "auto" : "plain"}`,
        auto_investigate: auto,
      });
      const trigger = `/platform${registration.platform_webhook_url}`;
      const before = await totalInvestigations();
      const startsAt = new Date().toISOString();
      const began = performance.now();
      for (let first = 0; first < ALERTS; first += PER_DELIVERY) {
        const alerts = Array.from({ length: PER_DELIVERY }, (_, index) => ({
          status: "firing",
          labels: {
            alertname: "StormMember",
            service: `svc-${(first + index) % 7}`,
            instance: `host-${first + index}`,
            run: String(auto),
          },
          annotations: { summary: "storm member" },
          startsAt,
          endsAt: "0001-01-01T00:00:00Z",
          generatorURL: "http://prometheus.internal:9090/graph",
          fingerprint: `storm-${auto}-${first + index}`,
        }));
        await post(trigger, {
          version: "4",
          groupKey: "{}:{}",
          truncatedAlerts: 0,
          status: "firing",
          receiver: "vigil",
          groupLabels: {},
          commonLabels: {},
          commonAnnotations: {},
          externalURL: "http://alertmanager.internal:9093",
          alerts,
        });
      }
      const ingestSeconds = (performance.now() - began) / 1000;
      let line = `  auto_investigate ${auto ? "on " : "off"}: ${(ALERTS / ingestSeconds).toFixed(0)} alerts/s ingested (${ingestSeconds.toFixed(2)} s)`;
      if (auto) {
        const deadline = Date.now() + DEADLINE_MS;
        let created = 0;
        while (Date.now() < deadline) {
          created = (await totalInvestigations()) - before;
          if (created >= ALERTS) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        line += `; ${created}/${ALERTS} investigations created ${((performance.now() - began) / 1000).toFixed(1)} s after the first delivery`;
      }
      console.log(line);
    }
  } finally {
    await vigil.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
