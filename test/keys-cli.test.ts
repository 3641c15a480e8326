// `vigil keys` and `vigil orgs` as an operator runs them while Vigil serves on its embedded default:
// the data directory is the server's, so the command line says how to ask the server, and does so
// over HTTP when given --url or VIGIL_URL.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { startVigil, type Vigil } from "../src/start.ts";

const BIN = new URL("../bin/vigil.js", import.meta.url).pathname;
const KEY = "keys-cli-bootstrap";
// Each command is a fresh node process that loads Vigil's sources: seconds each, more on a busy machine.
const SLOW = { timeout: 300_000 };

interface Result {
  code: number | null;
  stdout: string;
  output: string;
}

async function vigilCli(args: string[], env: Record<string, string>): Promise<Result> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "silent", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let output = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, stdout, output };
}

/** A loopback port nothing listens on: taken from the system, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("vigil keys and orgs while Vigil serves on the embedded database", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-keys-cli-"));
  let vigil: Vigil;
  let base = "";
  // The server's own data directory: the direct mode of the command line cannot open it.
  let env: Record<string, string> = {};

  beforeAll(async () => {
    const config = loadConfig(
      {},
      { dataDir, logLevel: "silent", secretKey: "keys-cli-secret", bootstrapApiKey: KEY },
    );
    vigil = await startVigil(config);
    await vigil.app.listen({ host: "127.0.0.1", port: 0 });
    base = `http://127.0.0.1:${(vigil.app.server.address() as AddressInfo).port}`;
    // No PORT or PUBLIC_URL: the command line learns where the server listens from the server.
    env = { DATA_DIR: dataDir };
  }, SLOW.timeout);

  afterAll(async () => {
    await vigil?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, SLOW.timeout);

  it("says the data directory is the server's and names the way over HTTP", SLOW, async () => {
    const [create, orgs] = await Promise.all([
      vigilCli(["keys", "create", "--name", "ci bot", "--user", "bob"], env),
      vigilCli(["orgs", "create", "payments"], env),
    ]);
    expect(create.code).toBe(1);
    expect(create.output).toContain(
      `vigil: DATA_DIR ${dataDir} is in use by a running Vigil (process ${process.pid}), and its embedded ` +
        "database admits one process at a time. Ask that Vigil over HTTP instead, with an API key that " +
        "has the scope api_keys_write:\n" +
        `  VIGIL_URL=${base} VIGIL_API_KEY=<key> node bin/vigil.js keys create --name 'ci bot'\n` +
        "(or pass --url and --api-key)\n--user is left out: over HTTP a key belongs to the calling key's user.\n" +
        "Without such a key yet: stop that Vigil and run this command again, or restart it with " +
        "BOOTSTRAP_API_KEY=<a key you choose> and use that key.",
    );
    expect(orgs.code).toBe(1);
    expect(orgs.output).toContain("has the scope orgs_write:\n");
    expect(orgs.output).toContain(`VIGIL_API_KEY=<key> node bin/vigil.js orgs create payments\n`);
  });

  it("creates an org and a key in it, lists and revokes keys, all over HTTP", SLOW, async () => {
    const http = { ...env, VIGIL_URL: base, VIGIL_API_KEY: KEY };
    const org = await vigilCli(["orgs", "create", "payments"], http);
    // The id alone on stdout (stderr may say the bundle is older than the sources and they run instead).
    expect(org.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
    const orgId = org.stdout.trim();

    const created = await vigilCli(
      ["keys", "create", "--name", "ci", "--scope", "integrations_read", "--org", orgId],
      http,
    );
    expect(created.code).toBe(0);
    const [, id, key] =
      /^id: {2}(\S+)\nkey: (\S+)\n\(the key is shown only this once\)\n$/.exec(created.stdout) ?? [];
    const auth = { authorization: `Bearer ${key}` };
    expect((await fetch(`${base}/api/v1/integrations?orgId=${orgId}`, { headers: auth })).status).toBe(200);
    const write = await fetch(`${base}/api/v1/integrations?orgId=${orgId}`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "nope", type: "grafana" }),
    });
    expect(write.status).toBe(403);

    // The flags instead of the environment.
    const listed = await vigilCli(["keys", "list", "--url", base, "--api-key", KEY], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ name: "bootstrap", prefix: "ke", revoked_at: null }),
      {
        id,
        name: "ci",
        prefix: key?.slice(0, 8),
        scopes: ["integrations_read"],
        org_ids: [orgId],
        created_at: expect.any(String),
        revoked_at: null,
      },
    ]);
    expect(listed.stdout).not.toContain(key);

    const revoked = await vigilCli(["keys", "revoke", id ?? ""], http);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${id}\n` });
    expect((await fetch(`${base}/api/v1/integrations`, { headers: auth })).status).toBe(401);
    const again = await vigilCli(["keys", "revoke", id ?? ""], http);
    expect(again.code).toBe(1);
    expect(again.output).toContain(`vigil: ${base} answered 409 CONFLICT: API key ${id} is already revoked`);
  });

  it("reports what the server refuses, and what is missing to ask it", SLOW, async () => {
    const weak = await vigilCli(["keys", "create", "--scope", "api_keys_write"], {
      ...env,
      VIGIL_URL: base,
      VIGIL_API_KEY: KEY,
    });
    const weakKey = /key: (\S+)/.exec(weak.stdout)?.[1] ?? "";
    const nowhere = `http://127.0.0.1:${await closedPort()}`;
    const [escalate, noKey, user, unreachable] = await Promise.all([
      vigilCli(["keys", "create", "--scope", "integrations_write"], {
        ...env,
        VIGIL_URL: base,
        VIGIL_API_KEY: weakKey,
      }),
      vigilCli(["keys", "list", "--url", base], env),
      vigilCli(["keys", "create", "--user", "bob"], { ...env, VIGIL_URL: base, VIGIL_API_KEY: KEY }),
      vigilCli(["keys", "list"], { ...env, VIGIL_URL: nowhere, VIGIL_API_KEY: KEY }),
    ]);
    expect(escalate.code).toBe(1);
    expect(escalate.output).toContain(
      `vigil: ${base} answered 403 INSUFFICIENT_SCOPE: scopes: this API key cannot grant integrations_write, which it does not hold`,
    );
    expect(noKey.code).toBe(1);
    expect(noKey.output).toContain(
      `an API key is needed to ask ${base}: set VIGIL_API_KEY or pass --api-key`,
    );
    expect(user.code).toBe(1);
    expect(user.output).toContain("--user: over HTTP a key belongs to the calling key's user");
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toContain(`cannot reach Vigil at ${nowhere}: connect ECONNREFUSED`);
  });
});

describe("vigil keys on the database directly", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-keys-direct-"));
  const env = { DATA_DIR: dataDir, SECRET_KEY: "keys-direct-secret" };
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it(
    "refuses an org that is not a uuid or does not exist, naming it, and creates a key in one that does",
    SLOW,
    async () => {
      const notUuid = await vigilCli(["keys", "create", "--org", "not-a-uuid"], env);
      expect(notUuid.code).toBe(1);
      expect(notUuid.output).toContain("vigil: --org not-a-uuid: must be an organization's id (a uuid)");
      const nowhere = "11111111-1111-4111-8111-111111111111";
      const unknown = await vigilCli(["keys", "create", "--org", nowhere], env);
      expect(unknown.code).toBe(1);
      expect(unknown.output).toContain(`vigil: --org ${nowhere}: no such organization`);
      for (const refused of [notUuid, unknown])
        expect(refused.output).not.toMatch(/Failed query|insert into/);
      const listed = await vigilCli(["keys", "list"], env);
      expect(JSON.parse(listed.stdout)).toEqual([]);

      const org = (await vigilCli(["orgs", "create", "platform"], env)).stdout.trim();
      const created = await vigilCli(["keys", "create", "--org", org.toUpperCase()], env);
      expect(created.code, created.output).toBe(0);
      const [key] = JSON.parse((await vigilCli(["keys", "list"], env)).stdout);
      expect(key.org_ids).toEqual([org]);
    },
  );
});

describe("the command line", () => {
  it("names a mistyped command as unknown, and tells its version", SLOW, async () => {
    const mistyped = await vigilCli(["kyes", "list"], {});
    expect(mistyped.code).toBe(1);
    expect(mistyped.output).toContain("error: unknown command 'kyes' (commands: serve, migrate, keys, orgs;");
    const version = await vigilCli(["--version"], {});
    expect(version.code).toBe(0);
    const { version: expected } = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    );
    expect(version.stdout.trim()).toBe(expected);
  });
});
