// The ingest bench's load generator, run in a worker thread: its HTTP client work (building bodies,
// writing requests, reading replies) stays off the event loop of a server in the bench's process. The
// main thread asks for one scenario at a time. It speaks to Vigil's webhook trigger (Alertmanager
// webhook bodies) or to Alertmanager's own API (POST /api/v2/alerts), with the same alerts.
import { Agent, request as httpRequest } from "node:http";
import { performance } from "node:perf_hooks";
import { isMainThread, parentPort, Worker } from "node:worker_threads";
import { percentile } from "./percentile.ts";

/** `vigil`: Alertmanager webhook bodies, 202 with outcomes; `alertmanager`: /api/v2/alerts, 200. */
export type Wire = "vigil" | "alertmanager";

export interface DriveRequest {
  port: number;
  path: string;
  /** `vigil` unless said. */
  wire?: Wire;
  alertsPerBody: number;
  maxRequests: number;
  /**
   * Replays the bodies of the previous non-replay run to the same port (from the first again when
   * they run out) instead of making new ones.
   */
  replay: boolean;
  /** Fingerprint prefix of new bodies: one hex digit, so runs never share an alert. */
  prefix: string;
  concurrency: number;
  durationMs: number;
}

export interface DriveResult {
  deliveries: number;
  alerts: number;
  seconds: number;
  p50: number;
  p99: number;
  failures: number;
  firstFailure: string | null;
  outcomes: Record<string, number>;
}

// ---- the alerts, as an Alertmanager webhook body (payload version 4, as Alertmanager 0.25 sends
// it) or as the array POST /api/v2/alerts takes ----

const STARTS_AT = new Date(Date.now() - 300_000).toISOString();

function alertsOf(prefix: string, first: number, size: number) {
  const alerts = [];
  for (let k = 0; k < size; k += 1) {
    const n = first + k;
    alerts.push({
      // The prefix is in the labels too: Alertmanager tells alerts apart by their labels alone.
      labels: {
        alertname: "HighErrorRate",
        service: `svc-${n % 97}`,
        instance: `host-${prefix}${n}:9100`,
        job: "node",
        severity: n % 3 === 0 ? "critical" : "warning",
      },
      annotations: {
        summary: `error rate above 5% on host-${n}`,
        description: `5xx ratio is 7.3% over 5m on host-${n}`,
        runbook_url: "https://runbooks.example/high-error-rate",
      },
      startsAt: STARTS_AT,
      generatorURL: "http://prometheus.example:9090/graph?g0.expr=rate",
      // 16 hex digits, unique per alert across the whole run.
      fingerprint: `${prefix}${n.toString(16).padStart(15, "0")}`,
    });
  }
  return alerts;
}

function alertmanagerBody(wire: Wire, prefix: string, first: number, size: number): string {
  const alerts = alertsOf(prefix, first, size);
  if (wire === "alertmanager") {
    // Alertmanager computes the fingerprint from the labels; an endsAt left out means "until resolved".
    return JSON.stringify(alerts.map(({ fingerprint: _, ...alert }) => alert));
  }
  return JSON.stringify({
    receiver: "vigil",
    status: "firing",
    alerts: alerts.map((alert) => ({ status: "firing", ...alert, endsAt: "0001-01-01T00:00:00Z" })),
    groupLabels: { alertname: "HighErrorRate" },
    commonLabels: { alertname: "HighErrorRate", job: "node" },
    commonAnnotations: {},
    externalURL: "http://alertmanager.example:9093",
    version: "4",
    groupKey: `{}:{alertname="HighErrorRate",batch="${prefix}${first}"}`,
    truncatedAlerts: 0,
  });
}

// ---- HTTP ----

export interface Reply {
  status: number;
  body: string;
}

export function post(agent: Agent, port: number, path: string, body: string, headers = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...headers,
        },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("request timed out")));
    req.on("error", reject);
    req.end(body);
  });
}

/** Posts bodies with `concurrency` requests in flight until maxRequests or the duration is spent. */
async function drive(agent: Agent, request: DriveRequest, bodies: (i: number) => string | undefined) {
  const latencies: number[] = [];
  const outcomes: Record<string, number> = {};
  let failures = 0;
  let firstFailure: string | null = null;
  let next = 0;
  const started = performance.now();
  const deadline = started + request.durationMs;
  async function worker() {
    for (;;) {
      if (next >= request.maxRequests || performance.now() > deadline) return;
      const body = bodies(next);
      next += 1;
      if (body === undefined) return;
      const sent = performance.now();
      const reply = await post(agent, request.port, request.path, body).catch(
        (err: Error): Reply => ({ status: 0, body: err.message }),
      );
      latencies.push(performance.now() - sent);
      if (reply.status !== (request.wire === "alertmanager" ? 200 : 202)) {
        failures += 1;
        firstFailure ??= `${reply.status} ${reply.body.slice(0, 300)}`;
        continue;
      }
      if (request.wire === "alertmanager") continue;
      const accepted = JSON.parse(reply.body) as { alerts: { outcome: string }[] };
      for (const alert of accepted.alerts) outcomes[alert.outcome] = (outcomes[alert.outcome] ?? 0) + 1;
    }
  }
  await Promise.all(Array.from({ length: request.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const deliveries = latencies.length - failures;
  return {
    deliveries,
    alerts: deliveries * request.alertsPerBody,
    seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    failures,
    firstFailure,
    outcomes,
  };
}

// ---- the worker ----

if (!isMainThread && parentPort) {
  const port = parentPort;
  let agent: Agent | null = null;
  /** The bodies of the last non-replay run, per port. */
  const previous = new Map<number, string[]>();
  port.on("message", async (request: DriveRequest) => {
    agent ??= new Agent({ keepAlive: true, maxSockets: request.concurrency });
    const sent: string[] = [];
    const replayed = previous.get(request.port) ?? [];
    const wire = request.wire ?? "vigil";
    const bodies = request.replay
      ? (i: number) => replayed[i % replayed.length]
      : (i: number) => {
          const body = alertmanagerBody(
            wire,
            request.prefix,
            i * request.alertsPerBody,
            request.alertsPerBody,
          );
          sent.push(body);
          return body;
        };
    const result = await drive(agent, request, bodies);
    if (!request.replay) previous.set(request.port, sent);
    port.postMessage(result);
  });
}

/** The load generator in its own thread; `run` drives one scenario and resolves with its figures. */
export function startLoadGenerator(): {
  run(request: DriveRequest): Promise<DriveResult>;
  stop(): Promise<void>;
} {
  // Module hooks are per thread: the worker registers tsx itself before loading this TypeScript file.
  const boot = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(boot, { eval: true });
  return {
    run: (request) =>
      new Promise((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        worker.once("error", onError);
        worker.once("message", (result: DriveResult) => {
          worker.off("error", onError);
          resolve(result);
        });
        worker.postMessage(request);
      }),
    stop: async () => {
      await worker.terminate();
    },
  };
}
