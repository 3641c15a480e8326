// A real Prometheus (the Debian package `prometheus`) on loopback, scraping a small exporter of our
// own every second, for the tests that read Prometheus' API. Required, not optional: without the
// binary the test fails and says how to install it (.ci/run does).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, onPath, poll, request } from "./alertmanager-process.ts";

const BINARY = "prometheus";

export function requirePrometheus(): string {
  const binary = onPath(BINARY);
  if (!binary) {
    throw new Error(
      `${BINARY} is not on PATH: this test needs a real Prometheus. Install the Debian package: apt-get install -y ${BINARY} (.ci/run installs it).`,
    );
  }
  return binary;
}

export interface PrometheusProcess {
  base: string;
  output(): string;
  /** Polls the series API until every metric name in `names` has a series. */
  waitForSeries(names: string[]): Promise<void>;
  stop(): Promise<void>;
}

/** An exporter on loopback answering GET /metrics with `metricsText`. */
async function startExporter(metricsText: string): Promise<{ port: number; server: Server }> {
  const server = createServer((req, res) => {
    res.writeHead(req.url === "/metrics" ? 200 : 404, { "content-type": "text/plain; version=0.0.4" });
    res.end(req.url === "/metrics" ? metricsText : "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("exporter is not listening");
  return { port: address.port, server };
}

/** Starts Prometheus scraping an exporter of `metricsText`, job `job`, with `targetLabels` on the target. */
export async function startPrometheus(
  binary: string,
  options: { metricsText: string; job: string; targetLabels: Record<string, string> },
): Promise<PrometheusProcess> {
  const exporter = await startExporter(options.metricsText);
  const dir = mkdtempSync(join(tmpdir(), "vigil-prometheus-"));
  const configFile = join(dir, "prometheus.yml");
  writeFileSync(
    configFile,
    [
      "global:",
      "  scrape_interval: 1s",
      "scrape_configs:",
      `  - job_name: ${JSON.stringify(options.job)}`,
      "    static_configs:",
      `      - targets: ["127.0.0.1:${exporter.port}"]`,
      `        labels: ${JSON.stringify(options.targetLabels)}`,
      "",
    ].join("\n"),
  );
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.on("exit", (code) => {
      exitCode = code;
      resolve();
    }),
  );
  const base = `http://127.0.0.1:${port}`;
  const describe = () => `--- ${BINARY} output ---\n${output.slice(-4000)}`;
  const prometheus: PrometheusProcess = {
    base,
    output: describe,
    async waitForSeries(names) {
      await poll(
        `series of ${names.join(", ")} in ${BINARY}`,
        async () => {
          for (const name of names) {
            const response = await request(`${base}/api/v1/series?match[]=${encodeURIComponent(name)}`);
            const body = (await response.json()) as { data?: unknown[] };
            if (!body.data?.length) return undefined;
          }
          return true;
        },
        describe,
        60_000,
      );
    },
    async stop() {
      if (exitCode === undefined) {
        child.kill("SIGTERM");
        const stopped = await Promise.race([
          exited.then(() => true),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000)),
        ]);
        if (!stopped) {
          child.kill("SIGKILL");
          await exited;
        }
      }
      await new Promise((resolve) => exporter.server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await poll(
      `${BINARY} to be ready on ${base}`,
      async () => {
        if (exitCode !== undefined) throw new Error(`${BINARY} exited with code ${exitCode}`);
        const response = await request(`${base}/-/ready`);
        return response.ok ? true : undefined;
      },
      describe,
      60_000,
    );
  } catch (err) {
    await prometheus.stop();
    throw err;
  }
  return prometheus;
}
