// Vigil scaled out as an operator runs it: on PostgreSQL, two API processes and two worker processes
// (real `vigil serve --role ...` children) on one database; on the embedded default, its one process
// (the data directory belongs to one process). Alertmanager deliveries go through both API
// instances at once, each body through both, so the same alert arrives concurrently on two
// processes. Every alert acknowledged with a 202 must be stored exactly once, under the one id every
// acknowledgement named, and be classified by the workers.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { freePort } from "./alertmanager-process.ts";
import { createTestDatabase, ENGINES } from "./harness.ts";
import { killVigils, runVigil } from "./vigil-process.ts";

const KEY = "scale-out-test-bootstrap-key";
const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
const GROUPS = 12;
const GROUP_SIZE = 10;
const IN_FLIGHT = 12;

// Generous: four processes start and work on a machine that may be loaded.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 300_000 });

afterAll(killVigils);

interface Instance {
  output: () => string;
  exited: Promise<number | null>;
  stop(): void;
}

/** `vigil serve` in a child process; resolves once it says it listens (api, all) or works (worker). */
async function serve(role: "all" | "api" | "worker", env: Record<string, string>, port: number) {
  const { child, output, exited } = runVigil(["serve", "--role", role], {
    BOOTSTRAP_API_KEY: KEY,
    PORT: String(port),
    ...env,
  });
  const started = role === "worker" ? '"msg":"worker started"' : '"msg":"vigil listening on';
  await until(
    () => {
      if (child.exitCode !== null) throw new Error(`vigil --role ${role} exited\n${output()}`);
      return output().includes(started);
    },
    `vigil --role ${role} to start`,
    output,
  );
  return { output, exited, stop: () => child.kill("SIGTERM") } satisfies Instance;
}

async function until(check: () => boolean | Promise<boolean>, what: string, output?: () => string) {
  const deadline = Date.now() + 240_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${output?.() ?? ""}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** An Alertmanager (payload version 4) body of the alerts numbered `from` to `to` (excluded). */
function alertmanagerBody(from: number, to: number): string {
  const alerts = [];
  for (let n = from; n < to; n += 1) {
    alerts.push({
      status: "firing",
      labels: {
        alertname: "QueueBacklog",
        service: `svc-${n % 7}`,
        instance: `worker-${n}:9100`,
        severity: "warning",
      },
      annotations: { summary: `backlog growing on worker-${n}` },
      startsAt: "2026-01-01T00:00:00Z",
      endsAt: "0001-01-01T00:00:00Z",
      fingerprint: `5ca1e${n.toString(16).padStart(11, "0")}`,
    });
  }
  return JSON.stringify({ version: "4", status: "firing", receiver: "vigil", alerts });
}

interface Acknowledged {
  id: string;
  external_uid: string;
  outcome: string;
}

/**
 * Every group's 10-alert body and each of its alerts alone, each through both API instances, adjacent
 * in the queue so that IN_FLIGHT senders deliver the same alert to both at the same moment.
 */
async function deliver(
  urls: [string, string],
): Promise<{ acknowledged: Acknowledged[]; failures: string[] }> {
  const queue: { url: string; body: string }[] = [];
  for (let group = 0; group < GROUPS; group += 1) {
    const first = group * GROUP_SIZE;
    for (const url of urls) queue.push({ url, body: alertmanagerBody(first, first + GROUP_SIZE) });
    for (let n = first; n < first + GROUP_SIZE; n += 1) {
      for (const url of urls) queue.push({ url, body: alertmanagerBody(n, n + 1) });
    }
  }
  const acknowledged: Acknowledged[] = [];
  const failures: string[] = [];
  let next = 0;
  async function sender() {
    for (let item = queue[next++]; item; item = queue[next++]) {
      const reply = await fetch(item.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: item.body,
      });
      const text = await reply.text();
      if (reply.status === 202) acknowledged.push(...(JSON.parse(text) as { alerts: Acknowledged[] }).alerts);
      else failures.push(`${reply.status} ${text}`);
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
  return { acknowledged, failures };
}

interface Listed {
  id: string;
  external_uid: string;
  analysis_status: string;
}

/** The error lines (pino level 50 and above) an instance wrote. */
function failedRequests(output: string): string[] {
  return output.split("\n").filter((line) => /"level":(5|6)\d/.test(line));
}

/** Every active alert of the registration, page by page. */
async function listAlerts(base: string): Promise<Listed[]> {
  const listed: Listed[] = [];
  for (let page = 1; ; page += 1) {
    const reply = await fetch(
      `${base}/app/sre/api/v1/alerts?integration_names=scale-out&page_size=500&page=${page}`,
      { headers: auth },
    );
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as { alerts: Listed[]; total_pages: number };
    listed.push(...body.alerts);
    if (page >= body.total_pages) return listed;
  }
}

/** The instances each engine runs: API bases to deliver through, and everything to stop. */
async function startInstances(engine: (typeof ENGINES)[number]) {
  const dataDirs: string[] = [];
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-scale-out-"));
    dataDirs.push(dir);
    return dir;
  };
  if (engine === "pglite") {
    const port = await freePort();
    const operations = await freePort();
    const all = await serve("all", { DATA_DIR: dataDir(), OPERATIONS_PORT: String(operations) }, port);
    const base = `http://127.0.0.1:${port}`;
    return {
      bases: [base, base] as [string, string],
      operations: [`http://127.0.0.1:${operations}`],
      instances: [all],
      drop: async () => {},
      dataDirs,
    };
  }
  const database = await createTestDatabase("postgres");
  await database.database.close();
  // Pools sized as an operator sizes them for four instances on one server (docs/scaling.md): the
  // server's connections are shared with the other tests running meanwhile.
  const env = { DATABASE_URL: database.url ?? "", SECRET_KEY: "scale-out-secret", DATABASE_POOL_SIZE: "6" };
  const ports = [await freePort(), await freePort()];
  // The workers' only HTTP: their probes and metrics.
  const operations = [await freePort(), await freePort()];
  // Started together: migrations take an advisory lock, so one applies them and the others wait.
  const instances = await Promise.all([
    serve("api", { ...env, DATA_DIR: dataDir() }, ports[0] ?? 0),
    serve("api", { ...env, DATA_DIR: dataDir() }, ports[1] ?? 0),
    ...operations.map(async (port) =>
      serve("worker", { ...env, DATA_DIR: dataDir(), OPERATIONS_PORT: String(port) }, await freePort()),
    ),
  ]);
  const bases = ports.map((port) => `http://127.0.0.1:${port}`) as [string, string];
  return {
    bases,
    operations: operations.map((port) => `http://127.0.0.1:${port}`),
    instances,
    drop: () => database.drop(),
    dataDirs,
  };
}

for (const engine of ENGINES) {
  const topology =
    engine === "postgres" ? "two API and two worker processes" : "the embedded default's process";
  describe(`scale-out: ${topology} [${engine}]`, () => {
    it("stores every acknowledged alert exactly once and classifies it, whichever instance took it", async () => {
      const { bases, operations, instances, drop, dataDirs } = await startInstances(engine);
      try {
        const registered = await fetch(`${bases[0]}/app/sre/api/v1/alerts/webhook`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({
            source: "alertmanager",
            integration: "scale-out",
            classify_mode: "immediate",
          }),
        });
        expect(registered.status).toBe(201);
        const path = `/platform${((await registered.json()) as { platform_webhook_url: string }).platform_webhook_url}`;

        const { acknowledged, failures } = await deliver([`${bases[0]}${path}`, `${bases[1]}${path}`]);
        // A failed delivery is shown with what the instances logged about it.
        const logged =
          failures.length > 0 ? instances.map((instance) => failedRequests(instance.output())) : [];
        expect({ failures, logged }).toEqual({ failures: [], logged: [] });
        // Each alert arrived 4 times (in its group's body and alone, through each instance).
        expect(acknowledged).toHaveLength(GROUPS * GROUP_SIZE * 4);

        // One id per alert, whichever instance answered, and exactly one delivery created it.
        const idOf = new Map<string, Set<string>>();
        const created = new Map<string, number>();
        for (const alert of acknowledged) {
          idOf.set(alert.external_uid, (idOf.get(alert.external_uid) ?? new Set()).add(alert.id));
          if (alert.outcome === "created")
            created.set(alert.external_uid, (created.get(alert.external_uid) ?? 0) + 1);
        }
        expect(idOf.size).toBe(GROUPS * GROUP_SIZE);
        expect([...idOf.values()].filter((ids) => ids.size !== 1)).toEqual([]);
        expect([...created.values()].filter((count) => count !== 1)).toEqual([]);
        expect(created.size).toBe(GROUPS * GROUP_SIZE);

        // Stored exactly once, as acknowledged, and read alike through either instance.
        const expected = [...idOf].map(([uid, ids]) => ({ external_uid: uid, id: [...ids][0] })).sort(byUid);
        for (const base of bases) {
          const stored = (await listAlerts(base))
            .map(({ id, external_uid }) => ({ external_uid, id }))
            .sort(byUid);
          expect(stored).toEqual(expected);
        }

        // Classified by the workers (the API instances on PostgreSQL run no jobs).
        let statuses: Record<string, number> = {};
        await until(
          async () => {
            statuses = {};
            for (const alert of await listAlerts(bases[1])) {
              statuses[alert.analysis_status] = (statuses[alert.analysis_status] ?? 0) + 1;
            }
            return statuses.completed === GROUPS * GROUP_SIZE;
          },
          "every alert to be classified",
          () => JSON.stringify(statuses),
        );
        // The processes that run the jobs report them on their probes-and-metrics port.
        let classified = 0;
        for (const base of operations) {
          expect((await fetch(`${base}/readyz`)).status).toBe(200);
          const text = await (await fetch(`${base}/metrics`)).text();
          const line = /^vigil_jobs_total\{job="alerts.classify",outcome="completed"\} (\d+)$/m.exec(text);
          classified += Number(line?.[1] ?? 0);
        }
        expect(classified).toBeGreaterThan(0);
      } finally {
        for (const instance of instances) instance.stop();
        const codes = await Promise.all(instances.map((instance) => instance.exited));
        await drop();
        for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
        expect(codes.every((code) => code === 0)).toBe(true);
      }
    });
  });
}

function byUid(a: { external_uid: string }, b: { external_uid: string }): number {
  return a.external_uid.localeCompare(b.external_uid);
}
