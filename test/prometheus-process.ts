// A real Prometheus (the Debian package `prometheus`) on loopback, scraping an exporter the test
// controls (a node HTTP server answering /metrics from a map of gauge values), for the tests that
// query series. The binary is required: without it the test fails and says how to install it.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePort, poll, request } from "./alertmanager-process.ts";

/** A series as it was before Prometheus started: `value` every 15 s over the last `seconds`. */
export interface SeriesHistory {
  /** The series as the exposition format writes it: `name{label="value"}`. */
  series: string;
  value: number;
  seconds: number;
}

/**
 * Writes the history into the storage directory as TSDB blocks, with the promtool of the same
 * package (`tsdb create-blocks-from openmetrics`): the series then reach back before the test ran.
 */
function backfill(binary: string, dataDir: string, history: SeriesHistory[]): void {
  const now = Math.floor(Date.now() / 1000);
  const lines: string[] = [];
  for (const { series, value, seconds } of history) {
    const name = series.split("{")[0];
    lines.push(`# TYPE ${name} gauge`);
    // Up to two minutes ago: the scrapes after the start carry on from there.
    for (let at = now - seconds; at <= now - 120; at += 15) lines.push(`${series} ${value} ${at}`);
  }
  const file = `${dataDir}.om`;
  writeFileSync(file, `${lines.join("\n")}\n# EOF\n`);
  const promtool = join(dirname(binary), "promtool");
  execFileSync(promtool, ["tsdb", "create-blocks-from", "openmetrics", file, dataDir], { stdio: "pipe" });
}

export function requirePrometheus(): string {
  for (const candidate of ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not installed here
    }
  }
  throw new Error(
    "prometheus is not installed: this test needs a real Prometheus. " +
      "Install the Debian package: apt-get install -y prometheus (.ci/run installs it).",
  );
}

export interface Exporter {
  url: string;
  /** Sets a gauge's value (`name{labels}` as written in the exposition). */
  set(series: string, value: number): void;
  /** Serves `text` as the whole exposition instead of the gauges set one by one. */
  setText(text: string): void;
  close(): Promise<void>;
}

export async function startExporter(): Promise<Exporter> {
  const values = new Map<string, number>();
  let text: string | null = null;
  const server: Server = createServer((req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    const lines = [...values].map(([series, value]) => `${series} ${value}`);
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(text ?? `${lines.join("\n")}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `127.0.0.1:${port}`,
    set: (series, value) => values.set(series, value),
    setText: (next) => {
      text = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface PrometheusProcess {
  base: string;
  output(): string;
  /** An instant query's first value, or null when the result is empty. */
  scalar(query: string): Promise<number | null>;
  /** Polls until the instant query's value satisfies `ready`. */
  waitFor(what: string, query: string, ready: (value: number | null) => boolean): Promise<void>;
  /** Polls the series API until every metric name in `names` has a series. */
  waitForSeries(names: string[]): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts Prometheus scraping `target` every second (as job `scrape.job`, with `scrape.labels` on
 * the target), with a temporary storage directory.
 */
export async function startPrometheus(
  binary: string,
  target: string,
  scrape: { job?: string; labels?: Record<string, string>; history?: SeriesHistory[] } = {},
): Promise<PrometheusProcess> {
  const dir = mkdtempSync(join(tmpdir(), "vigil-prometheus-"));
  if (scrape.history?.length) backfill(binary, join(dir, "data"), scrape.history);
  const configFile = join(dir, "prometheus.yml");
  writeFileSync(
    configFile,
    [
      "global:",
      "  scrape_interval: 1s",
      "  evaluation_interval: 1s",
      "scrape_configs:",
      `  - job_name: ${JSON.stringify(scrape.job ?? "exporter")}`,
      "    static_configs:",
      `      - targets: ["${target}"]`,
      ...(scrape.labels ? [`        labels: ${JSON.stringify(scrape.labels)}`] : []),
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
  const describe = () => `--- prometheus output ---\n${output.slice(-4000)}`;
  const prometheus: PrometheusProcess = {
    base,
    output: describe,
    async scalar(query) {
      const response = await request(`${base}/api/v1/query?query=${encodeURIComponent(query)}`);
      const body = (await response.json()) as { data?: { result?: { value: [number, string] }[] } };
      const value = body.data?.result?.[0]?.value?.[1];
      return value === undefined ? null : Number(value);
    },
    async waitFor(what, query, ready) {
      await poll(
        what,
        async () => (ready(await prometheus.scalar(query)) ? true : undefined),
        describe,
        60_000,
      );
    },
    async waitForSeries(names) {
      await poll(
        `series of ${names.join(", ")} in prometheus`,
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
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await poll(
      `prometheus to be ready on ${base}`,
      async () => {
        if (exitCode !== undefined) throw new Error(`prometheus exited with code ${exitCode}`);
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
