// The real `vigil` command as an operator runs it: start, serve, refuse a second process on the same
// data directory, finish an in-flight request on SIGTERM, restart on the same files with the data
// intact, create keys from the CLI, and (on PostgreSQL) run two instances against one database.
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { freePort } from "./alertmanager-process.ts";
import { createTestDatabase } from "./harness.ts";
import { killVigils, type Running, runVigil } from "./vigil-process.ts";

const BIN = new URL("../bin/vigil.js", import.meta.url).pathname;
const KEY = "process-test-bootstrap-key";

// Generous: on a loaded machine a start can take many times its quiet duration.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

async function until(check: () => boolean, what: string, running?: Running, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${running?.output() ?? ""}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function serve(env: Record<string, string>): Promise<Running & { base: string }> {
  const port = await freePort();
  const running = runVigil(["serve"], { ...env, PORT: String(port), BOOTSTRAP_API_KEY: KEY });
  await until(() => running.output().includes("vigil listening"), "vigil to listen", running);
  return { ...running, base: `http://127.0.0.1:${port}` };
}

function requestsLogged(running: Running): number {
  return running.output().split('"msg":"incoming request"').length - 1;
}

const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

afterAll(killVigils);

describe("the vigil process on its embedded default", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-process-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("serves, finishes an in-flight request on SIGTERM, and restarts with its data intact", async () => {
    const first = await serve({ DATA_DIR: dataDir });
    const created = await fetch(`${first.base}/api/v1/integrations`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ name: "before-restart", type: "alertmanager" }),
    });
    expect(created.status).toBe(201);

    // A second process on the same files would corrupt them: it must refuse to start.
    const second = runVigil(["serve"], { DATA_DIR: dataDir, PORT: String(await freePort()) });
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain("is in use by process");

    // Send half a request, then SIGTERM, then the rest: the request must complete.
    const body = JSON.stringify({ name: "in-flight", type: "grafana" });
    const url = new URL(`${first.base}/api/v1/integrations`);
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: { ...auth, "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          let text = "";
          res.on("data", (chunk) => {
            text += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      req.write(body.slice(0, 10));
      // Fastify logs each request once its head has arrived; the signal goes when this one has.
      const arrived = requestsLogged(first) + 1;
      until(() => requestsLogged(first) >= arrived, "the request to arrive", first)
        .then(async () => {
          first.child.kill("SIGTERM");
          await until(() => first.output().includes("shutting down"), "shutdown to begin", first);
          req.end(body.slice(10));
        })
        .catch(reject);
    });
    const answered = await response;
    expect(answered.status).toBe(201);
    expect(JSON.parse(answered.text)).toMatchObject({ name: "in-flight" });
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('"msg":"stopped"');

    const restarted = await serve({ DATA_DIR: dataDir });
    const ready = await fetch(`${restarted.base}/readyz`);
    expect(ready.status).toBe(200);
    const list = await fetch(`${restarted.base}/api/v1/integrations`, { headers: auth });
    expect(((await list.json()) as { name: string }[]).map((item) => item.name)).toEqual([
      "before-restart",
      "in-flight",
    ]);
    restarted.child.kill("SIGTERM");
    expect(await restarted.exited).toBe(0);
  });

  it("closes a request still unfinished when SHUTDOWN_TIMEOUT_MS runs out, and stops cleanly", async () => {
    const slowDir = mkdtempSync(join(tmpdir(), "vigil-process-slow-"));
    try {
      const running = await serve({ DATA_DIR: slowDir, SHUTDOWN_TIMEOUT_MS: "1000" });
      const url = new URL(`${running.base}/api/v1/integrations`);
      // Half a body that never gets its rest: a slow client the shutdown must not wait for.
      const closed = new Promise<string>((resolve) => {
        const req = httpRequest({
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: { ...auth, "content-length": 100 },
        });
        req.on("error", (err) => resolve(err.message));
        req.on("response", (res) => resolve(`answered ${res.statusCode}`));
        req.write('{"name":');
      });
      const arrived = requestsLogged(running) + 1;
      await until(() => requestsLogged(running) >= arrived, "the request to arrive", running);
      running.child.kill("SIGTERM");
      expect(await closed).toMatch(/socket hang up|ECONNRESET/);
      // The backstop (the timeout and 5 s more) was not needed: the shutdown finished on its own.
      expect(await running.exited).toBe(0);
      expect(running.output()).toContain('"msg":"stopped"');
      expect(running.output()).not.toContain("shutdown timed out");
    } finally {
      rmSync(slowDir, { recursive: true, force: true });
    }
  });

  it("creates a key from the CLI that works with exactly the scopes it was given", async () => {
    const created = runVigil(["keys", "create", "--name", "ci", "--scope", "integrations_read"], {
      DATA_DIR: dataDir,
    });
    expect(await created.exited).toBe(0);
    const key = /key: (\S+)/.exec(created.output())?.[1];
    expect(key).toMatch(/^vgl_/);

    const rejected = runVigil(["keys", "create", "--scope", "everything"], { DATA_DIR: dataDir });
    expect(await rejected.exited).toBe(1);
    expect(rejected.output()).toContain("unknown scope everything");

    const server = await serve({ DATA_DIR: dataDir });
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    expect((await fetch(`${server.base}/api/v1/integrations`, { headers })).status).toBe(200);
    const write = await fetch(`${server.base}/api/v1/integrations`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "nope", type: "grafana" }),
    });
    expect(write.status).toBe(403);
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(0);
  });
});

describe("start-up", () => {
  it("says what it is doing, in order, on a fresh DATA_DIR and becomes ready", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vigil-fresh-"));
    try {
      const server = await serve({ DATA_DIR: dataDir });
      expect((await fetch(`${server.base}/readyz`)).status).toBe(200);
      const messages = server
        .output()
        .split("\n")
        .flatMap((line) => (line.startsWith("{") ? [(JSON.parse(line) as { msg: string }).msg] : []));
      const steps = [
        "starting vigil",
        "opening the database",
        /^new database: (copied from the migrated template|creating it)$/,
        /^(migrations applied|schema is current)$/,
        "starting the job queue",
        "preparing the HTTP API",
        `vigil listening on ${server.base}`,
      ];
      const positions = steps.map((step) =>
        messages.findIndex((msg) => (typeof step === "string" ? msg === step : step.test(msg))),
      );
      expect(
        positions.every((position) => position >= 0),
        server.output(),
      ).toBe(true);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      // A database created from nothing counts its migrations out loud.
      if (messages.includes("new database: creating it")) {
        expect(messages.some((msg) => msg.startsWith("applying migration 1 of "))).toBe(true);
      }
      server.child.kill("SIGTERM");
      expect(await server.exited).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
  it("refuses a DATA_DIR it cannot create, naming it, instead of hanging", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vigil-nodir-"));
    const aFile = join(dir, "a-file");
    writeFileSync(aFile, "");
    try {
      for (const dataDir of ["/proc/vigil-no-such-dir/data", join(aFile, "data")]) {
        const refused = runVigil(["serve"], { DATA_DIR: dataDir, PORT: String(await freePort()) });
        expect(await refused.exited, refused.output()).toBe(1);
        expect(refused.output()).toContain(`cannot create DATA_DIR ${dataDir}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stops cleanly on Ctrl-C during start-up and leaves the data directory free", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vigil-interrupted-"));
    try {
      const starting = runVigil(["serve"], { DATA_DIR: dataDir, PORT: String(await freePort()) });
      await until(() => starting.output().includes("starting vigil"), "vigil to start", starting);
      starting.child.kill("SIGINT");
      expect(await starting.exited, starting.output()).toBe(0);
      expect(starting.output()).toContain('"msg":"stopped"');
      expect(readdirSync(dataDir)).not.toContain("vigil.pid");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

// The launcher in a package of its own (bin/, package.json, and links to this checkout's src/ and
// node_modules/), with a dist/vigil.js that only says it ran: which one starts is what is tested.
describe("bin/vigil.js chooses the bundle or the sources", () => {
  const root = mkdtempSync(join(tmpdir(), "vigil-launcher-"));
  const checkout = new URL("../", import.meta.url).pathname;
  mkdirSync(join(root, "bin"));
  mkdirSync(join(root, "dist"));
  copyFileSync(BIN, join(root, "bin", "vigil.js"));
  copyFileSync(join(checkout, "package.json"), join(root, "package.json"));
  symlinkSync(join(checkout, "src"), join(root, "src"));
  // node_modules/ of links to the checkout's packages, with a record of the install of its own.
  mkdirSync(join(root, "node_modules"));
  for (const name of readdirSync(join(checkout, "node_modules"))) {
    if (name !== ".package-lock.json") {
      symlinkSync(join(checkout, "node_modules", name), join(root, "node_modules", name));
    }
  }
  const installRecord = join(root, "node_modules", ".package-lock.json");
  const bundle = join(root, "dist", "vigil.js");
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const launch = (env: Record<string, string> = {}): Running =>
    runVigil(["--help"], env, join(root, "bin", "vigil.js"));

  function writeBundle(modified: Date): void {
    writeFileSync(bundle, 'process.stdout.write("the bundle ran\\n");\n');
    utimesSync(bundle, modified, modified);
  }

  it("runs the sources, saying why, when there is no bundle", async () => {
    rmSync(bundle, { force: true });
    const run = launch();
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain("running the TypeScript sources: dist/vigil.js is missing");
    expect(run.output()).toContain("Usage: vigil");
  });

  it("runs the sources, saying why, when the bundle is older than a source file", async () => {
    writeBundle(new Date("2000-01-01T00:00:00Z"));
    const run = launch();
    expect(await run.exited).toBe(0);
    expect(run.output()).toMatch(
      /running the TypeScript sources: dist\/vigil\.js is older than src\/\S+\.ts/,
    );
    expect(run.output()).toContain("Usage: vigil");
    expect(run.output()).not.toContain("the bundle ran");
  });

  it("runs the sources, saying why, when packages were installed after the bundle was built", async () => {
    writeBundle(new Date(Date.now() + 3_600_000));
    writeFileSync(installRecord, "{}\n");
    const later = new Date(Date.now() + 7_200_000);
    utimesSync(installRecord, later, later);
    const run = launch();
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain("dist/vigil.js is older than the installed packages");
    expect(run.output()).not.toContain("the bundle ran");
    rmSync(installRecord);
  });

  it("runs a bundle at least as new as the sources and the install, unless VIGIL_FROM_SOURCE=1", async () => {
    writeBundle(new Date(Date.now() + 3_600_000));
    writeFileSync(installRecord, "{}\n");
    const fresh = launch();
    expect(await fresh.exited).toBe(0);
    expect(fresh.output()).toBe("the bundle ran\n");

    const forced = launch({ VIGIL_FROM_SOURCE: "1" });
    expect(await forced.exited).toBe(0);
    expect(forced.output()).toContain("Usage: vigil");
    expect(forced.output()).not.toContain("the bundle ran");
    expect(forced.output()).not.toContain("running the TypeScript sources");
  });
});

describe.runIf(Boolean(process.env.TEST_DATABASE_URL))("the vigil process on PostgreSQL", () => {
  it("runs two instances against one database and migrates idempotently", async () => {
    const database = await createTestDatabase("postgres");
    await database.database.close();
    const env = {
      DATABASE_URL: database.url ?? "",
      SECRET_KEY: "shared-secret",
      DATA_DIR: mkdtempSync(join(tmpdir(), "vigil-pg-")),
    };
    try {
      // Started together: the migration lock makes one wait for the other.
      const [a, b] = await Promise.all([serve(env), serve(env)]);
      for (const instance of [a, b]) expect((await fetch(`${instance.base}/readyz`)).status).toBe(200);
      const created = await fetch(`${a.base}/api/v1/integrations`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: "seen-by-both", type: "grafana", credentials: { token: "t" } }),
      });
      expect(created.status).toBe(201);
      const fromB = await fetch(`${b.base}/api/v1/integrations/seen-by-both`, { headers: auth });
      expect(await fromB.json()).toMatchObject({ name: "seen-by-both", has_credentials: true });

      const migrate = runVigil(["migrate"], env);
      expect(await migrate.exited).toBe(0);
      expect(migrate.output()).toContain("schema is current");

      const noSecret = runVigil(["serve"], {
        DATABASE_URL: database.url ?? "",
        PORT: String(await freePort()),
      });
      expect(await noSecret.exited).toBe(1);
      expect(noSecret.output()).toContain("SECRET_KEY is required with DATABASE_URL");

      for (const instance of [a, b]) instance.child.kill("SIGTERM");
      expect(await Promise.all([a.exited, b.exited])).toEqual([0, 0]);
    } finally {
      await database.drop();
    }
  });
});
