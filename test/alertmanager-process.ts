// A real Prometheus Alertmanager (the Debian package `prometheus-alertmanager`) on loopback, for the
// tests that read its API and for the ingest bench, which measures it beside Vigil. The binary is
// required, not optional: without it the test or bench fails and says how to install it (.ci/run does).
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

const BINARY = "prometheus-alertmanager";
const STEP_TIMEOUT_MS = 30_000;

export function onPath(name: string): string | null {
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

export function requireAlertmanager(): string {
  const binary = onPath(BINARY);
  if (!binary) {
    throw new Error(
      `${BINARY} is not on PATH: this needs a real Prometheus Alertmanager. ` +
        `Install the Debian package: apt-get install -y ${BINARY} (.ci/run installs it).`,
    );
  }
  return binary;
}

export async function freePort(): Promise<number> {
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

/** Polls `check` until it returns a value, or fails naming `what` (with `context()`, e.g. the output). */
export async function poll<T>(
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

export interface PostableAlert {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  startsAt?: string;
  endsAt?: string;
  generatorURL?: string;
}

export interface GettableAlert {
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  status: { state: string; silencedBy: string[]; inhibitedBy: string[] };
}

export interface AlertmanagerProcess {
  base: string;
  port: number;
  /** The process id (the ingest bench reads its CPU time). */
  pid: number;
  output(): string;
  /** POST /api/v2/alerts. */
  postAlerts(alerts: PostableAlert[]): Promise<void>;
  /** GET /api/v2/alerts (active, silenced and inhibited), the body as text. */
  alertListText(): Promise<string>;
  /** Polls the alert list until `ready` accepts it. */
  waitForAlerts(what: string, ready: (alerts: GettableAlert[]) => boolean): Promise<GettableAlert[]>;
  /** POST /api/v2/silences for exact label matchers; answers the silence id. */
  silence(matchers: Record<string, string>): Promise<string>;
  stop(): Promise<void>;
}

export async function request(url: string, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(5_000) });
}

/**
 * Starts Alertmanager with one inhibit rule (a `critical` alert inhibits `warning` alerts with the
 * same `service` label) and a receiver that sends nowhere (`nowhere`; `Watchdog` alerts go to
 * `null`), or, given `webhookUrl`, a webhook receiver that groups by alertname, waits 1 s and also
 * sends resolves.
 */
export async function startAlertmanager(
  binary: string,
  options: { webhookUrl?: string } = {},
): Promise<AlertmanagerProcess> {
  const dir = mkdtempSync(join(tmpdir(), "vigil-alertmanager-"));
  const configFile = join(dir, "alertmanager.yml");
  const receiver = options.webhookUrl
    ? [
        "route:",
        "  receiver: vigil",
        "  group_by: [alertname]",
        "  group_wait: 1s",
        "  group_interval: 1s",
        "  repeat_interval: 1h",
        "receivers:",
        "  - name: vigil",
        "    webhook_configs:",
        `      - url: ${JSON.stringify(options.webhookUrl)}`,
        "        send_resolved: true",
      ]
    : [
        "route:",
        "  receiver: nowhere",
        "  group_by: [alertname]",
        // As kube-prometheus routes its always-firing Watchdog: to a receiver without configs.
        "  routes:",
        "    - matchers: [alertname=Watchdog]",
        '      receiver: "null"',
        "receivers:",
        "  - name: nowhere",
        '  - name: "null"',
      ];
  writeFileSync(
    configFile,
    [
      ...receiver,
      "inhibit_rules:",
      "  - source_matchers: [severity=critical]",
      "    target_matchers: [severity=warning]",
      "    equal: [service]",
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
  const describe = () => `--- ${BINARY} output ---\n${output}`;

  const am: AlertmanagerProcess = {
    base,
    port,
    pid: child.pid ?? 0,
    output: describe,
    async postAlerts(alerts) {
      const response = await request(`${base}/api/v2/alerts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(alerts),
      });
      if (response.status !== 200) {
        throw new Error(
          `POST /api/v2/alerts answered ${response.status}: ${await response.text()}\n${describe()}`,
        );
      }
    },
    async alertListText() {
      const response = await request(`${base}/api/v2/alerts?active=true&silenced=true&inhibited=true`);
      return response.text();
    },
    async waitForAlerts(what, ready) {
      return poll(
        what,
        async () => {
          const alerts = JSON.parse(await am.alertListText()) as GettableAlert[];
          return ready(alerts) ? alerts : undefined;
        },
        describe,
      );
    },
    async silence(matchers) {
      const now = Date.now();
      const response = await request(`${base}/api/v2/silences`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          matchers: Object.entries(matchers).map(([name, value]) => ({ name, value, isRegex: false })),
          startsAt: new Date(now - 1000).toISOString(),
          endsAt: new Date(now + 3_600_000).toISOString(),
          createdBy: "vigil tests",
          comment: "silenced by a test",
        }),
      });
      const body = (await response.json()) as { silenceID?: string };
      if (response.status !== 200 || !body.silenceID) {
        throw new Error(`POST /api/v2/silences answered ${response.status}\n${describe()}`);
      }
      return body.silenceID;
    },
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
        describe,
      ),
    ]);
  } catch (err) {
    await am.stop();
    throw err;
  }
  return am;
}
