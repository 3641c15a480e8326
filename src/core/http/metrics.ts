// Prometheus metrics: request counts and durations by route and status, plus whatever domains add
// to the same registry. One registry per app, so tests can build several apps in one process.
import type { FastifyInstance } from "fastify";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** One value of a gauge read at scrape time, with its labels. */
export interface GaugeReading<L extends string> {
  labels: Partial<Record<L, string>>;
  value: number;
}

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "vigil_" });
  const requests = new Counter({
    name: "vigil_http_requests_total",
    help: "HTTP requests by method, route and status",
    labelNames: ["method", "route", "status_code"],
    registers: [registry],
  });
  const durations = new Histogram({
    name: "vigil_http_request_duration_seconds",
    help: "HTTP request durations by method, route and status",
    labelNames: ["method", "route", "status_code"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  /** A domain's counter, created on first use and shared afterwards. */
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> =>
    (registry.getSingleMetric(name) as Counter<L> | undefined) ??
    new Counter({ name, help, labelNames, registers: [registry] });
  /**
   * A gauge read from the database when scraped (a backlog, a queue's depth). A read that fails
   * (the database is down) leaves it without values for that scrape; the other metrics still answer.
   */
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    read: () => Promise<GaugeReading<L>[]>,
  ): void => {
    if (registry.getSingleMetric(name)) return;
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const readings = await read().catch(() => []);
        this.reset();
        for (const { labels, value } of readings) this.set(labels, value);
      },
    });
  };
  /** A counter kept elsewhere (by the database's pool), read when scraped. */
  const countedElsewhere = (name: string, help: string, read: () => number): void => {
    if (registry.getSingleMetric(name)) return;
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  };
  return { registry, requests, durations, counter, gauge, countedElsewhere };
}

export type Metrics = ReturnType<typeof createMetrics>;

export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook("onResponse", async (request, reply) => {
    // The route template, never the raw URL: ids in paths would explode the label set.
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? "unmatched",
      status_code: String(reply.statusCode),
    };
    metrics.requests.inc(labels);
    metrics.durations.observe(labels, reply.elapsedTime / 1000);
  });
}
