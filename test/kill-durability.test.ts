// Ingest answers 202 only once the alerts are committed, so no acknowledged alert may be lost when the
// process dies without warning. A real `vigil serve` takes a steady stream of Alertmanager
// deliveries and is killed with SIGKILL while requests are in flight; restarted on the same data, it
// must hold every alert it acknowledged, exactly once, under the id it answered with, and go on
// taking deliveries. Alerts whose delivery got no answer may or may not be stored: both are allowed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { freePort } from "./alertmanager-process.ts";
import { createTestDatabase, ENGINES, type Engine } from "./harness.ts";
import { killVigils, type Running, runVigil } from "./vigil-process.ts";

const KEY = "kill-durability-test-bootstrap-key";
const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
const INTEGRATION = "kill-durability";
const IN_FLIGHT = 16;
// Alerts acknowledged before the kill: enough that the kill lands among many committed deliveries.
const ACKNOWLEDGED_BEFORE_KILL = 200;

// Generous: a start, a crash recovery and a restart on a machine that may be loaded.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 300_000 });

afterAll(killVigils);

async function until(check: () => boolean | Promise<boolean>, what: string, output?: () => string) {
  const deadline = Date.now() + 240_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${output?.() ?? ""}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `vigil serve` on `env`'s data, once it listens and answers /readyz with 200. */
async function serve(env: Record<string, string>): Promise<Running & { base: string }> {
  const port = await freePort();
  const running = runVigil(["serve"], { ...env, PORT: String(port), BOOTSTRAP_API_KEY: KEY });
  const base = `http://127.0.0.1:${port}`;
  await until(
    async () => {
      if (running.child.exitCode !== null) throw new Error(`vigil exited\n${running.output()}`);
      if (!running.output().includes('"msg":"vigil listening on')) return false;
      return (await fetch(`${base}/readyz`)).status === 200;
    },
    "vigil to be ready",
    running.output,
  );
  return { ...running, base };
}

/** An Alertmanager (payload version 4) body of the alerts numbered `from` to `to` (excluded). */
function alertmanagerBody(from: number, to: number): string {
  const alerts = [];
  for (let n = from; n < to; n += 1) {
    alerts.push({
      status: "firing",
      labels: { alertname: `DiskFilling${n}`, instance: `node-${n}:9100`, severity: "warning" },
      annotations: { summary: `disk filling on node-${n}` },
      startsAt: "2026-01-01T00:00:00Z",
      endsAt: "0001-01-01T00:00:00Z",
      fingerprint: `d15c${n.toString(16).padStart(12, "0")}`,
    });
  }
  return JSON.stringify({ version: "4", status: "firing", receiver: "vigil", alerts });
}

interface Acknowledged {
  id: string;
  external_uid: string;
}

/**
 * IN_FLIGHT senders deliver bodies of 1 and 50 new alerts in turn until `stopWhen` says so once a
 * reply is in; then SIGKILL goes to the server while the others' requests are still open. Returns the
 * alerts acknowledged with 202 and how many requests were open when the signal went.
 */
async function deliverAndKill(server: Running, url: string) {
  const acknowledged: Acknowledged[] = [];
  const refused: string[] = [];
  let nextAlert = 0;
  let bodies = 0;
  let open = 0;
  let openAtKill = -1;
  const killed = () => openAtKill >= 0;
  async function sender() {
    while (!killed()) {
      const size = bodies++ % 2 === 0 ? 1 : 50;
      const from = nextAlert;
      nextAlert += size;
      open += 1;
      try {
        const reply = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: alertmanagerBody(from, from + size),
        });
        const text = await reply.text();
        if (reply.status === 202) {
          acknowledged.push(...(JSON.parse(text) as { alerts: Acknowledged[] }).alerts);
        } else {
          refused.push(`${reply.status} ${text}`);
        }
      } catch (err) {
        // A connection the kill cut: no answer, so no promise was made about these alerts.
        if (!killed()) throw err;
      } finally {
        open -= 1;
      }
      if (!killed() && acknowledged.length >= ACKNOWLEDGED_BEFORE_KILL) {
        openAtKill = open;
        server.child.kill("SIGKILL");
      }
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
  return { acknowledged: [...acknowledged], refused, openAtKill, sent: nextAlert };
}

interface Listed {
  id: string;
  external_uid: string;
}

/** Every active alert of the registration, page by page, as the API lists it. */
async function listAlerts(base: string): Promise<Listed[]> {
  const listed: Listed[] = [];
  for (let page = 1; ; page += 1) {
    const reply = await fetch(
      `${base}/app/sre/api/v1/alerts?integration_names=${INTEGRATION}&page_size=500&page=${page}`,
      { headers: auth },
    );
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as { alerts: Listed[]; total_pages: number };
    listed.push(...body.alerts.map(({ id, external_uid }) => ({ id, external_uid })));
    if (page >= body.total_pages) return listed;
  }
}

/** The data each engine keeps across the restart: a DATA_DIR, and on PostgreSQL a database. */
async function dataFor(engine: Engine): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-kill-"));
  if (engine === "pglite") {
    return {
      env: { DATA_DIR: dataDir },
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const database = await createTestDatabase("postgres");
  await database.database.close();
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: database.url ?? "", SECRET_KEY: "kill-durability-secret" },
    drop: async () => {
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

for (const engine of ENGINES) {
  describe(`an acknowledged alert survives kill -9 [${engine}]`, () => {
    it("holds every alert it answered 202 for, exactly once, after SIGKILL mid-stream and a restart", async () => {
      const data = await dataFor(engine);
      try {
        const first = await serve(data.env);
        const registered = await fetch(`${first.base}/app/sre/api/v1/alerts/webhook`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ source: "alertmanager", integration: INTEGRATION }),
        });
        expect(registered.status).toBe(201);
        const path = `/platform${((await registered.json()) as { platform_webhook_url: string }).platform_webhook_url}`;

        const { acknowledged, refused, openAtKill, sent } = await deliverAndKill(
          first,
          `${first.base}${path}`,
        );
        expect(await first.exited).toBeNull();
        expect(first.child.signalCode).toBe("SIGKILL");
        expect(refused).toEqual([]);
        expect(acknowledged.length).toBeGreaterThanOrEqual(ACKNOWLEDGED_BEFORE_KILL);
        // The kill must land on open requests, or it proves nothing about them.
        expect(openAtKill).toBeGreaterThan(0);
        const acknowledgedIds = new Map(acknowledged.map((alert) => [alert.external_uid, alert.id]));
        expect(acknowledgedIds.size).toBe(acknowledged.length);

        // Same data: a PGlite process killed this way leaves its vigil.pid behind, and must not block.
        const restarted = await serve(data.env);
        // Distinct rows by id (a page boundary may repeat or skip a row while the list changes, which
        // a later listing settles); each external uid must name one row, the acknowledged one.
        let stored = new Map<string, string[]>();
        const missing = () => [...acknowledgedIds.keys()].filter((uid) => !stored.has(uid));
        await until(
          async () => {
            const rows = new Map((await listAlerts(restarted.base)).map((row) => [row.id, row]));
            stored = new Map();
            for (const row of rows.values()) {
              stored.set(row.external_uid, [...(stored.get(row.external_uid) ?? []), row.id]);
            }
            return missing().length === 0;
          },
          "every acknowledged alert to be listed",
          () =>
            `${missing().length} of ${acknowledgedIds.size} acknowledged alerts missing (of ${sent} sent): ` +
            `${missing().slice(0, 20).join(", ")}\n${restarted.output()}`,
        );
        const mismatched = [...acknowledgedIds].filter(([uid, id]) => {
          const ids = stored.get(uid) ?? [];
          return ids.length !== 1 || ids[0] !== id;
        });
        expect(mismatched).toEqual([]);
        // Alerts whose delivery was cut may be stored or not, but never twice.
        expect([...stored].filter(([, ids]) => ids.length !== 1)).toEqual([]);
        expect(stored.size).toBeLessThanOrEqual(sent);
        // Read one by its external uid too, as a deep link would.
        const [uid, id] = [...acknowledgedIds][0] ?? [];
        const one = await fetch(`${restarted.base}/app/sre/api/v1/alerts/${uid}`, { headers: auth });
        expect(one.status).toBe(200);
        expect(await one.json()).toMatchObject({ id, external_uid: uid });

        // The data survived intact: a new delivery is acknowledged and can be read back.
        const after = await fetch(`${restarted.base}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: alertmanagerBody(sent, sent + 1),
        });
        expect(after.status).toBe(202);
        const [fresh] = ((await after.json()) as { alerts: Acknowledged[] }).alerts;
        const read = await fetch(`${restarted.base}/app/sre/api/v1/alerts/${fresh?.id}`, { headers: auth });
        expect(read.status).toBe(200);
        expect(await read.json()).toMatchObject({ id: fresh?.id, external_uid: fresh?.external_uid });

        restarted.child.kill("SIGTERM");
        expect(await restarted.exited).toBe(0);
      } finally {
        killVigils();
        await data.drop();
      }
    });
  });
}
