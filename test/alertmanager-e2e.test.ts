// A real sender: Prometheus Alertmanager (the Debian package `prometheus-alertmanager`) with a webhook
// receiver pointing at a listening Vigil's trigger URL. Alerts posted to Alertmanager's API arrive in
// Vigil with Alertmanager's own fingerprints as external_uid, and resolve the same way. The binary is
// required, not optional: without it the test fails and says how to install it (.ci/run does).
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AlertV1 } from "../src/alerts/schemas.ts";
import { describeEachEngine } from "./harness.ts";

const BINARY = "prometheus-alertmanager";
const STEP_TIMEOUT_MS = 30_000;

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}

function requireAlertmanager(): string {
  const binary = onPath(BINARY);
  if (!binary) {
    throw new Error(
      `${BINARY} is not on PATH: this end-to-end test needs a real Prometheus Alertmanager. ` +
        `Install the Debian package: apt-get install -y ${BINARY} (.ci/run installs it).`,
    );
  }
  return binary;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Polls `check` until it returns a value, or fails naming `what` (with Alertmanager's output). */
async function poll<T>(
  what: string,
  check: () => Promise<T | undefined>,
  context: () => string = () => "",
  timeoutMs = STEP_TIMEOUT_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${reason}\n${context()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function request(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(5_000) });
}

interface AlertmanagerProcess {
  base: string;
  output(): string;
  stop(): Promise<void>;
}

async function startAlertmanager(binary: string, triggerUrl: string): Promise<AlertmanagerProcess> {
  const dir = mkdtempSync(join(tmpdir(), "vigil-alertmanager-"));
  const configFile = join(dir, "alertmanager.yml");
  // group_by alertname: the two HighLatency alerts travel in one body, DiskFull in another.
  writeFileSync(
    configFile,
    [
      "global:",
      "  resolve_timeout: 5m",
      "route:",
      "  receiver: vigil",
      "  group_by: [alertname]",
      "  group_wait: 1s",
      "  group_interval: 1s",
      "  repeat_interval: 1h",
      "receivers:",
      "  - name: vigil",
      "    webhook_configs:",
      `      - url: ${JSON.stringify(triggerUrl)}`,
      "        send_resolved: true",
      "",
    ].join("\n"),
  );
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--cluster.listen-address=",
      "--log.level=debug",
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
  const spawnFailed = new Promise<Error>((resolve) => child.on("error", resolve));
  const base = `http://127.0.0.1:${port}`;
  const am: AlertmanagerProcess = {
    base,
    output: () => `--- ${BINARY} output ---\n${output}`,
    async stop() {
      if (exitCode === undefined) {
        child.kill("SIGTERM");
        const killed = await Promise.race([
          exited.then(() => true),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
        ]);
        if (!killed) {
          child.kill("SIGKILL");
          await exited;
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.race([
      spawnFailed.then((err) => {
        throw new Error(`${BINARY} could not be started: ${err.message}`);
      }),
      poll(
        `${BINARY} to be ready on ${base}`,
        async () => {
          if (exitCode !== undefined) throw new Error(`${BINARY} exited with code ${exitCode}`);
          const response = await request(`${base}/-/ready`);
          return response.ok ? true : undefined;
        },
        am.output,
      ),
    ]);
  } catch (err) {
    await am.stop();
    throw err;
  }
  return am;
}

interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt?: string;
  generatorURL: string;
}

interface GettableAlert {
  fingerprint: string;
  labels: Record<string, string>;
  status: { state: string };
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

describeEachEngine("Prometheus Alertmanager posting to a running Vigil", (harness) => {
  let alertmanager: AlertmanagerProcess | null = null;
  let vigilBase = "";
  let auth: { authorization: string } = { authorization: "" };
  const run = Math.random().toString(36).slice(2, 8);
  // Whole milliseconds, so the times Vigil returns compare equal to what was posted.
  const startsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000).toISOString();
  const alerts: PostableAlert[] = [
    {
      labels: { alertname: "HighLatency", service: "checkout", instance: "web-1", severity: "critical", run },
      annotations: { summary: "p99 latency above 2s", description: "checkout p99 is 2.4s on web-1" },
      startsAt,
      generatorURL: "http://prometheus.example:9090/graph?g0.expr=latency",
    },
    {
      labels: { alertname: "HighLatency", service: "checkout", instance: "web-2", severity: "critical", run },
      annotations: { summary: "p99 latency above 2s", description: "checkout p99 is 2.1s on web-2" },
      startsAt,
      generatorURL: "http://prometheus.example:9090/graph?g0.expr=latency",
    },
    {
      labels: { alertname: "DiskFull", service: "db", instance: "db-1", severity: "warning", run },
      annotations: { summary: "disk 95% full", runbook_url: "https://runbooks.example/disk-full" },
      startsAt,
      generatorURL: "http://prometheus.example:9090/graph?g0.expr=disk",
    },
  ];
  const expected: Record<string, { title: string; description: string; severity: string; bucket: string }> = {
    "web-1": {
      title: "HighLatency",
      description: "p99 latency above 2s\n\ncheckout p99 is 2.4s on web-1",
      severity: "critical",
      bucket: "Critical",
    },
    "web-2": {
      title: "HighLatency",
      description: "p99 latency above 2s\n\ncheckout p99 is 2.1s on web-2",
      severity: "critical",
      bucket: "Critical",
    },
    "db-1": { title: "DiskFull", description: "disk 95% full", severity: "warning", bucket: "Medium" },
  };
  /** Alertmanager's fingerprint of each alert, by its instance label. */
  const fingerprints = new Map<string, string>();

  beforeAll(async () => {
    const binary = requireAlertmanager();
    const { vigil, createKey } = harness();
    await vigil.app.listen({ port: 0, host: "127.0.0.1" });
    const address = vigil.app.server.address();
    if (!address || typeof address !== "object") throw new Error("vigil is not listening");
    vigilBase = `http://127.0.0.1:${address.port}`;
    ({ auth } = await createKey());
    const registered = await request(`${vigilBase}/app/sre/api/v1/alerts/webhook`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ source: "alertmanager", integration: "e2e" }),
    });
    expect(registered.status).toBe(201);
    const registration = (await registered.json()) as { platform_webhook_url: string };
    expect(registration.platform_webhook_url).toMatch(/^\/api\/v1\/webhooks\/trigger\?apiKey=/);
    alertmanager = await startAlertmanager(
      binary,
      `${vigilBase}/platform${registration.platform_webhook_url}`,
    );
  }, 60_000);

  afterAll(async () => {
    await alertmanager?.stop();
  });

  function am(): AlertmanagerProcess {
    if (!alertmanager) throw new Error("alertmanager not started");
    return alertmanager;
  }

  async function postToAlertmanager(body: PostableAlert[]): Promise<void> {
    const response = await request(`${am().base}/api/v2/alerts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status, `${await response.clone().text()}\n${am().output()}`).toBe(200);
  }

  async function vigilAlert(uid: string): Promise<AlertV1 | undefined> {
    const response = await request(`${vigilBase}/app/sre/api/v1/alerts/${encodeURIComponent(uid)}`, {
      headers: auth,
    });
    if (response.status === 404) return undefined;
    expect(response.status).toBe(200);
    return (await response.json()) as AlertV1;
  }

  it("delivers firing alerts that Vigil stores under Alertmanager's fingerprints", async () => {
    await postToAlertmanager(alerts);

    // Alertmanager's own fingerprints, from its API.
    await poll(
      "Alertmanager to list the posted alerts",
      async () => {
        const response = await request(`${am().base}/api/v2/alerts?filter=run%3D%22${run}%22`);
        const listed = (await response.json()) as GettableAlert[];
        if (listed.length < alerts.length) return undefined;
        for (const alert of alerts) {
          const match = listed.find((item) => sameLabels(item.labels, alert.labels));
          if (!match) return undefined;
          expect(match.status.state).toBe("active");
          fingerprints.set(alert.labels.instance as string, match.fingerprint);
        }
        return true;
      },
      am().output,
    );
    expect(new Set(fingerprints.values()).size).toBe(alerts.length);
    for (const fingerprint of fingerprints.values()) expect(fingerprint).toMatch(/^[0-9a-f]{16}$/);

    for (const alert of alerts) {
      const instance = alert.labels.instance as string;
      const fingerprint = fingerprints.get(instance) as string;
      const stored = await poll(
        `Vigil to show the ${instance} alert (${fingerprint})`,
        async () => {
          const found = await vigilAlert(fingerprint);
          return found?.status === "active" ? found : undefined;
        },
        am().output,
      );
      const want = expected[instance];
      expect(stored.external_uid).toBe(fingerprint);
      expect(stored.source_type).toBe("alertmanager");
      expect(stored.integration_name).toBe("e2e");
      expect(stored.title).toBe(want?.title);
      expect(stored.description).toBe(want?.description);
      expect(stored.source_severity).toBe(want?.severity);
      expect(stored.signal_severity).toBe(want?.bucket);
      expect(stored.labels).toEqual(alert.labels);
      expect(Date.parse(stored.triggered_at)).toBe(Date.parse(startsAt));
      expect(stored.resolved_at).toBeNull();
      expect(stored.ingested_via).toBe("push");
      expect(stored.links).toContainEqual({ kind: "source", url: alert.generatorURL });

      // The body is Alertmanager's own webhook (version 4), kept verbatim, with the fingerprint in it.
      const payload = JSON.parse(stored.raw_payload ?? "null") as {
        version: string;
        receiver: string;
        groupLabels: Record<string, string>;
        alerts: { fingerprint: string; status: string; labels: Record<string, string> }[];
      };
      expect(payload.version).toBe("4");
      expect(payload.receiver).toBe("vigil");
      expect(payload.groupLabels).toEqual({ alertname: alert.labels.alertname });
      const sent = payload.alerts.find((item) => item.fingerprint === fingerprint);
      expect(sent?.status).toBe("firing");
      expect(sent?.labels).toEqual(alert.labels);
    }
    // One group carried both HighLatency alerts in one body.
    const web1 = await vigilAlert(fingerprints.get("web-1") as string);
    const grouped = JSON.parse(web1?.raw_payload ?? "{}") as { alerts?: unknown[] };
    expect(grouped.alerts?.length).toBe(2);

    const listed = await request(`${vigilBase}/app/sre/api/v1/alerts?status=active&page_size=100`, {
      headers: auth,
    });
    const list = (await listed.json()) as { alerts: AlertV1[] };
    expect(list.alerts.map((alert) => alert.external_uid).sort()).toEqual([...fingerprints.values()].sort());
  }, 90_000);

  it("resolves them when Alertmanager sends the resolve", async () => {
    expect(fingerprints.size).toBe(alerts.length);
    const endsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 1_000).toISOString();
    await postToAlertmanager(alerts.map((alert) => ({ ...alert, endsAt })));

    for (const alert of alerts) {
      const instance = alert.labels.instance as string;
      const fingerprint = fingerprints.get(instance) as string;
      const stored = await poll(
        `Vigil to show the ${instance} alert resolved`,
        async () => {
          const found = await vigilAlert(fingerprint);
          return found?.status === "resolved" ? found : undefined;
        },
        am().output,
      );
      expect(stored.external_uid).toBe(fingerprint);
      expect(stored.resolved_at).not.toBeNull();
      expect(Date.parse(stored.resolved_at as string)).toBe(Date.parse(endsAt));
      expect(Date.parse(stored.triggered_at)).toBe(Date.parse(startsAt));
      expect(stored.refire_count).toBe(0);
      const payload = JSON.parse(stored.raw_payload ?? "null") as {
        alerts: { fingerprint: string; status: string }[];
      };
      expect(payload.alerts.find((item) => item.fingerprint === fingerprint)?.status).toBe("resolved");
    }

    const history = await request(`${vigilBase}/app/sre/api/v1/alerts/${fingerprints.get("db-1")}/history`, {
      headers: auth,
    });
    const { events } = (await history.json()) as { events: { kind: string }[] };
    expect(events.map((event) => event.kind)).toEqual(["created", "resolved"]);
  }, 90_000);
});
