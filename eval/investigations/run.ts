// The investigation eval: every case of cases.json is an alert ingested through a real Alertmanager
// trigger, in a tenant of its own whose integrations point at a loopback server answering the
// Prometheus and Alertmanager APIs from the case's recorded replies; Vigil investigates it (the
// deterministic investigator, no LLM) and the outcome is scored against the case's expected verdict
// and root cause. Runs on in-memory PGlite in this process.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { loadConfig } from "../../src/config.ts";
import { createApiKey } from "../../src/core/auth/keys.ts";
import { openDatabase } from "../../src/core/db/database.ts";
import { startVigil, type Vigil } from "../../src/start.ts";

type Cause = "threshold_held" | "absent" | "always_crossed" | "flapping" | "watchdog" | "upstream";

/** Another alert of the case's storm: its own name, labels (the case's when absent) and rule. */
interface Peer {
  alertname: string;
  summary?: string;
  labels?: Record<string, string>;
  expr?: string;
  /** Seconds from the case's trigger (default -60: a minute before). */
  at?: number;
}

interface Case {
  name: string;
  alert: {
    alertname: string;
    service: string;
    expr: string | null;
    cycles?: number;
    /** Labels besides alertname, service and severity (cluster, namespace, node...). */
    labels?: Record<string, string>;
  };
  /** Recorded Prometheus replies: the series as [seconds from the trigger, value] steps (held until the
   * next step; none: no series), and the answers of the changes and share instant queries. */
  prometheus?: { range: [number, number][]; changes: number | null; share: number | null } | "down";
  alertmanager?: { silences: unknown[]; alerts: unknown[] };
  /** Other alerts that fire just before the case's alert: a name (on the same service) or a peer. */
  distractors?: (string | Peer)[];
  /** `upstream`: the name of the alert the top upstream hypothesis must blame. */
  expect: { verdict: string; cause: Cause | null; upstream?: string };
}

interface Hypothesis {
  statement: string;
  confidence: number | null;
  status: string;
}

/** How a hypothesis names each root cause (the statements the investigator writes). */
const CAUSE_PATTERNS: Record<Cause, RegExp> = {
  threshold_held: /crossed .* and stayed there/,
  absent: /series of .* is absent/,
  always_crossed: /crossed nearly all the time/,
  flapping: /flaps on its threshold|re-fires and auto-resolves repeatedly/,
  watchdog: /is a test or watchdog alert/,
  upstream: /symptom of an upstream problem/,
};
const causeOf = (statement: string) =>
  (Object.keys(CAUSE_PATTERNS) as Cause[]).find((cause) => CAUSE_PATTERNS[cause].test(statement)) ?? null;

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

/** Serves /c<index>/prom/... and /c<index>/am/... from the cases' recorded replies. */
function answer(cases: Case[], triggeredAt: number[], req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const match = /^\/c(\d+)\/(prom|am)\/(.*)$/.exec(url.pathname);
  const item = match ? cases[Number(match[1])] : undefined;
  if (!match || !item) return json(res, 404, { error: "unknown case" });
  const [, , api, path] = match;
  if (api === "am" && item.alertmanager) {
    if (path === "api/v2/silences") return json(res, 200, item.alertmanager.silences);
    if (path === "api/v2/alerts") return json(res, 200, item.alertmanager.alerts);
  }
  const prom = item.prometheus;
  if (api !== "prom" || !prom) return json(res, 404, { error: "not recorded" });
  if (prom === "down") return json(res, 503, { status: "error", error: "service unavailable" });
  const trigger = (triggeredAt[Number(match[1])] ?? 0) / 1000;
  if (path === "api/v1/query_range") {
    if (prom.range.length === 0)
      return json(res, 200, { status: "success", data: { resultType: "matrix", result: [] } });
    const start = Number(url.searchParams.get("start"));
    const end = Number(url.searchParams.get("end"));
    const step = Number(url.searchParams.get("step")) || 15;
    const values: [number, string][] = [];
    for (let at = start; at <= end; at += step) {
      const held = prom.range.filter(([offset]) => trigger + offset <= at).at(-1) ?? prom.range[0];
      values.push([at, String(held?.[1] ?? 0)]);
    }
    return json(res, 200, {
      status: "success",
      data: { resultType: "matrix", result: [{ metric: {}, values }] },
    });
  }
  if (path === "api/v1/query") {
    const query = url.searchParams.get("query") ?? "";
    const value = query.startsWith("changes(") ? prom.changes : prom.share;
    const result =
      value === null ? [] : [{ metric: {}, value: [Number(url.searchParams.get("time")), String(value)] }];
    return json(res, 200, { status: "success", data: { resultType: "vector", result } });
  }
  return json(res, 404, { error: "not recorded" });
}

function amBody(
  item: Case,
  fingerprint: string,
  startsAt: Date,
  generatorURL: string,
  resolvedAt?: Date,
  peer?: Peer,
): string {
  const alertname = peer?.alertname ?? item.alert.alertname;
  const labels: Record<string, string> = {
    alertname,
    ...(peer?.labels ?? { service: item.alert.service, ...item.alert.labels }),
    severity: "critical",
  };
  const summary = peer?.summary ?? `${alertname} on ${labels.service ?? item.alert.service}`;
  return JSON.stringify({
    version: "4",
    groupKey: `{}:{alertname="${alertname}"}`,
    truncatedAlerts: 0,
    status: resolvedAt ? "resolved" : "firing",
    receiver: "vigil",
    groupLabels: { alertname },
    commonLabels: labels,
    commonAnnotations: {},
    externalURL: "http://alertmanager.internal:9093",
    alerts: [
      {
        status: resolvedAt ? "resolved" : "firing",
        labels,
        annotations: { summary },
        startsAt: startsAt.toISOString(),
        endsAt: (resolvedAt ?? new Date(0)).toISOString(),
        generatorURL,
        fingerprint,
      },
    ],
  });
}

const percent = (part: number, whole: number) => (whole ? `${((100 * part) / whole).toFixed(1)}%` : "n/a");

export default async function runInvestigationsEval(): Promise<void> {
  const cases = JSON.parse(readFileSync(new URL("cases.json", import.meta.url), "utf8")) as Case[];
  const triggeredAt: number[] = [];
  const server = createServer((req, res) => answer(cases, triggeredAt, req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-eval-"));
  const database = await openDatabase({ memory: true });
  const config = loadConfig(
    {},
    { dataDir, logLevel: "silent", secretKey: "eval-secret-key", integrationAllowedHosts: ["127.0.0.1"] },
  );
  const vigil: Vigil = await startVigil(config, { database });
  const inject = (auth: string, method: "GET" | "POST", url: string, payload?: object | string) =>
    vigil.app.inject({
      method,
      url,
      headers: { authorization: auth, "content-type": "application/json" },
      payload: payload as never,
    });

  let verdictHits = 0;
  let withCause = 0;
  let top1 = 0;
  let top3 = 0;
  let verified = 0;
  let verifiedFromIntegration = 0;
  let brierSum = 0;
  let brierCount = 0;
  const durations: number[] = [];
  const misses: string[] = [];
  try {
    for (const [index, item] of cases.entries()) {
      const key = await createApiKey(database.db, { userName: `eval-${randomBytes(4).toString("hex")}` });
      const auth = `Bearer ${key.key}`;
      const bases: string[] = [];
      if (item.prometheus) {
        const url = `${base}/c${index}/prom`;
        const created = await inject(auth, "POST", "/api/v1/integrations", {
          name: "prometheus",
          type: "prometheus",
          url,
        });
        if (created.statusCode !== 201) throw new Error(`integration: ${created.body}`);
        bases.push(url);
      }
      if (item.alertmanager) {
        const url = `${base}/c${index}/am`;
        const created = await inject(auth, "POST", "/api/v1/integrations", {
          name: "alertmanager",
          type: "alertmanager",
          url,
        });
        if (created.statusCode !== 201) throw new Error(`integration: ${created.body}`);
        bases.push(url);
      }
      const registration = await inject(auth, "POST", "/app/sre/api/v1/alerts/webhook", {
        source: "alertmanager",
        integration: "alertmanager-eval",
      });
      if (registration.statusCode !== 201) throw new Error(`registration: ${registration.body}`);
      const trigger = `/platform${registration.json().platform_webhook_url}`;
      const deliver = async (body: string) => {
        const response = await inject("", "POST", trigger, body);
        if (response.statusCode !== 202) throw new Error(`delivery: ${response.body}`);
        return response.json().alerts[0].id as string;
      };
      const promHost = item.prometheus ? `${base}/c${index}/prom` : "http://prometheus.internal:9090";
      const ruleURL = (expr: string | null) =>
        expr ? `${promHost}/graph?g0.expr=${encodeURIComponent(expr)}&g0.tab=1` : `${promHost}/alerts`;
      const generatorURL = ruleURL(item.alert.expr);
      const startsAt = new Date(Date.now() - 120_000);
      triggeredAt[index] = startsAt.getTime();
      for (const [n, distractor] of (item.distractors ?? []).entries()) {
        const peer = typeof distractor === "string" ? { alertname: distractor } : distractor;
        const firedAt = new Date(startsAt.getTime() + (peer.at ?? -60) * 1000);
        const url = peer.expr ? ruleURL(peer.expr) : generatorURL;
        await deliver(amBody(item, `d-${index}-${n}`, firedAt, url, undefined, peer));
      }
      const fingerprint = `case-${index}`;
      for (let cycle = 1; cycle < (item.alert.cycles ?? 1); cycle += 1) {
        const firedAt = new Date(startsAt.getTime() - (item.alert.cycles ?? 1) * 600_000 + cycle * 600_000);
        await deliver(amBody(item, fingerprint, firedAt, generatorURL));
        await deliver(amBody(item, fingerprint, firedAt, generatorURL, new Date(firedAt.getTime() + 60_000)));
      }
      const alertId = await deliver(amBody(item, fingerprint, startsAt, generatorURL));

      const began = performance.now();
      const started = await inject(auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`, {});
      const investigationId = started.json().investigation?.id as string;
      if (!investigationId) throw new Error(`investigate: ${started.body}`);
      const deadline = Date.now() + 60_000;
      let done: Record<string, unknown> | null = null;
      while (Date.now() < deadline) {
        const body = (await inject(auth, "GET", `/app/sre/api/v1/investigations/${investigationId}`)).json();
        if (["completed", "failed", "cancelled"].includes(body.status)) {
          done = body;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      durations.push(performance.now() - began);
      if (!done) {
        misses.push(`${item.name}: did not finish`);
        continue;
      }
      const verdict = (done.structured_rca as { plain_summary?: { verdict?: string } } | null)?.plain_summary
        ?.verdict;
      if (verdict === item.expect.verdict) verdictHits += 1;
      else misses.push(`${item.name}: verdict ${verdict ?? done.status}, expected ${item.expect.verdict}`);
      const hypotheses = (done.hypotheses ?? []) as Hypothesis[];
      // An upstream hypothesis counts only when it blames the case's true upstream alert.
      const causes = hypotheses.map((h) => {
        const cause = causeOf(h.statement);
        const upstream = item.expect.upstream;
        return cause === "upstream" && upstream && !h.statement.includes(upstream) ? null : cause;
      });
      if (item.expect.cause) {
        withCause += 1;
        if (causes[0] === item.expect.cause) top1 += 1;
        if (causes.slice(0, 3).includes(item.expect.cause)) top3 += 1;
        else
          misses.push(
            `${item.name}: ${item.expect.cause} not in the top 3 (${causes.slice(0, 3).join(", ")})`,
          );
      }
      for (const h of hypotheses) {
        if (h.confidence === null) continue;
        const cause = causes[hypotheses.indexOf(h)];
        const outcome = item.expect.cause !== null && cause === item.expect.cause ? 1 : 0;
        brierSum += (h.confidence - outcome) ** 2;
        brierCount += 1;
      }
      for (const evidence of (done.evidence ?? []) as { url: string; verified: boolean }[]) {
        if (!evidence.verified) continue;
        verified += 1;
        if (bases.some((b) => evidence.url.startsWith(`${b}/`))) verifiedFromIntegration += 1;
        else misses.push(`${item.name}: ${evidence.url} shown as verified, not from an integration`);
      }
    }
  } finally {
    await vigil.stop();
    await database.close();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
  durations.sort((a, b) => a - b);
  const p50 = durations[Math.floor((durations.length - 1) / 2)] ?? 0;
  const abstain = cases.filter((item) => item.expect.verdict === "not_enough_information").length;
  console.log(
    `investigations eval: ${cases.length} cases (${withCause} with a root cause, ${abstain} abstentions), deterministic investigator, PGlite in memory`,
  );
  console.log(
    `  verdict accuracy:          ${verdictHits}/${cases.length} = ${percent(verdictHits, cases.length)}`,
  );
  console.log(`  root cause top hypothesis: ${top1}/${withCause} = ${percent(top1, withCause)}`);
  console.log(`  root cause in top 3:       ${top3}/${withCause} = ${percent(top3, withCause)}`);
  console.log(
    `  evidence integrity:        ${verifiedFromIntegration}/${verified} verified links from an integration = ${percent(verifiedFromIntegration, verified)}`,
  );
  console.log(
    `  Brier score:               ${(brierCount ? brierSum / brierCount : 0).toFixed(3)} over ${brierCount} hypotheses`,
  );
  console.log(
    `  duration p50:              ${(p50 / 1000).toFixed(2)} s (max ${((durations.at(-1) ?? 0) / 1000).toFixed(2)} s)`,
  );
  if (misses.length > 0) {
    console.log("  misses:");
    for (const miss of misses) console.log(`    ${miss}`);
  }
}
