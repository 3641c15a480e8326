// Prometheus metrics: request counts and durations by route and status, plus whatever domains add
// to the same registry. One registry per app, so tests can build several apps in one process.
import type { FastifyInstance } from "fastify";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** One value of a gauge read at scrape time, with its labels. */
export interface GaugeReading<L extends string> {
  labels: Partial<Record<L, string>>;
  value: number;
}

/** How long a scrape waits for a gauge's read: half of Prometheus's default scrape timeout (10 s). */
const GAUGE_READ_TIMEOUT_MS = 5000;

/** What `promise` resolves to, or null when it takes longer than `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
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
  // Reads of the gauges in progress: a scrape's failures count in the same scrape.
  const reading = new Set<Promise<void>>();
  const readFailures = new Counter({
    name: "vigil_metrics_read_failures_total",
    help: `Scrapes that left a gauge out because reading it failed or took over ${GAUGE_READ_TIMEOUT_MS / 1000} s (the database is down or slow), by gauge`,
    labelNames: ["gauge"],
    registers: [registry],
    async collect() {
      // A scrape collects every metric at once: after one turn, each gauge's read has begun.
      await null;
      await Promise.allSettled(reading);
    },
  });
  /**
   * A gauge read from the database when scraped (a backlog, a queue's depth). A read that fails or
   * takes too long (the database is down or slow) leaves the gauge without any sample for that
   * scrape, never a 0 that reads as healthy, and counts in vigil_metrics_read_failures_total; the
   * other metrics still answer. A read still running from an earlier scrape is waited for again
   * rather than started anew, so a hung database does not pile up reads.
   */
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    read: () => Promise<GaugeReading<L>[]>,
  ): void => {
    if (registry.getSingleMetric(name)) return;
    readFailures.inc({ gauge: name }, 0);
    let running: Promise<GaugeReading<L>[] | null> | null = null;
    const update = async () => {
      if (!running) {
        const started = read().catch(() => null);
        running = started;
        started.then(() => {
          if (running === started) running = null;
        });
      }
      const readings = await within(running, GAUGE_READ_TIMEOUT_MS);
      metric.reset();
      if (readings === null) {
        // reset() leaves an unlabelled gauge at 0.
        metric.remove({});
        readFailures.inc({ gauge: name });
        return;
      }
      for (const { labels, value } of readings) metric.set(labels, value);
    };
    const metric: Gauge<L> = new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        const updated = update();
        reading.add(updated);
        return updated.finally(() => reading.delete(updated));
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
