// Each test file gets a freshly migrated database of its own and a Vigil built on it. Every storage
// test runs on PGlite, and again on PostgreSQL when TEST_DATABASE_URL names a server: the harness
// creates a database there for the file and drops it afterwards.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, inject } from "vitest";
import { type Config, loadConfig } from "../src/config.ts";
import { createApiKey, createOrg, revokeApiKey } from "../src/core/auth/keys.ts";
import type { Scope } from "../src/core/auth/scopes.ts";
import { type Database, openDatabase } from "../src/core/db/database.ts";
import type { StartOptions, Vigil } from "../src/start.ts";
import { startVigil } from "../src/start.ts";

export type Engine = "pglite" | "postgres";

const postgresUrl = process.env.TEST_DATABASE_URL?.trim() || null;

export const ENGINES: Engine[] = postgresUrl ? ["pglite", "postgres"] : ["pglite"];

export interface TestDatabase {
  database: Database;
  /** Set on PostgreSQL: the URL of this file's own database. */
  url: string | null;
  drop(): Promise<void>;
}

/** The migrated template's image, read once per test file (test/global-setup.ts writes it). */
let pgliteImage: Promise<Blob | undefined> | null = null;
function templateImage(): Promise<Blob | undefined> {
  const path = inject("pgliteImage");
  pgliteImage ??= path ? readFile(path).then((bytes) => new Blob([bytes])) : Promise.resolve(undefined);
  return pgliteImage;
}

/**
 * A new database: in-memory PGlite, or a fresh database on the TEST_DATABASE_URL server. The
 * in-memory one starts as a copy of the migrated template unless `empty` (for tests of a migration's
 * own work); both take any migrations they lack when Vigil starts on them.
 */
export async function createTestDatabase(engine: Engine, { empty = false } = {}): Promise<TestDatabase> {
  if (engine === "pglite") {
    const image = empty ? undefined : await templateImage();
    const database = await openDatabase({ memory: true, image });
    return { database, url: null, drop: () => database.close() };
  }
  if (!postgresUrl) throw new Error("TEST_DATABASE_URL is not set");
  const name = `vigil_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  return {
    database,
    url: url.toString(),
    async drop() {
      await database.close();
      const cleanup = new pg.Client({ connectionString: postgresUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-test-"));
  return loadConfig({}, { dataDir, logLevel: "silent", secretKey: "test-secret-key", ...overrides });
}

/** The headers that authenticate a request as an API key's owner. */
export type Auth = { authorization: string };

export interface KeyOptions {
  userName?: string;
  scopes?: readonly Scope[];
  orgIds?: string[];
}

export interface Harness {
  engine: Engine;
  vigil: Vigil;
  /** A new API key; by default for a fresh user with every scope. */
  createKey(options?: KeyOptions): Promise<{ id: string; key: string; auth: Auth }>;
  revokeKey(id: string): Promise<void>;
  createOrg(name?: string): Promise<string>;
}

export async function startHarness(
  engine: Engine,
  configOverrides: Partial<Config> = {},
  options: StartOptions = {},
): Promise<Harness & { stop(): Promise<void> }> {
  const testDatabase = await createTestDatabase(engine);
  const config = testConfig(configOverrides);
  const vigil = await startVigil(config, {
    pollingIntervalSeconds: 0.5,
    ...options,
    database: testDatabase.database,
  });
  const db = testDatabase.database.db;
  return {
    engine,
    vigil,
    async createKey(keyOptions = {}) {
      const created = await createApiKey(db, {
        userName: keyOptions.userName ?? `user-${randomBytes(4).toString("hex")}`,
        scopes: keyOptions.scopes,
        orgIds: keyOptions.orgIds,
      });
      return { ...created, auth: { authorization: `Bearer ${created.key}` } };
    },
    async revokeKey(id) {
      await revokeApiKey(db, id);
    },
    createOrg: (name = "org") => createOrg(db, name),
    async stop() {
      await vigil.stop();
      await testDatabase.drop();
      rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `body` once per engine, each with its own Vigil started before and stopped after the block.
 * `harness()` returns the running one.
 */
export function describeEachEngine(
  name: string,
  body: (harness: () => Harness) => void,
  configOverrides: Partial<Config> = {},
  options: StartOptions = {},
): void {
  describeOn(ENGINES, name, body, configOverrides, options);
}

/**
 * Runs `body` on one engine: PostgreSQL where the tests have one, else the embedded database. For
 * slow tests whose checks do not depend on the engine: clients of the HTTP API (the OpenTofu
 * provider, the console in a browser) and the investigator reading a real Prometheus, which wait on
 * their peers' real time. The API's own tests and the investigations' storage run on both.
 */
export function describeOnOneEngine(
  name: string,
  body: (harness: () => Harness) => void,
  configOverrides: Partial<Config> = {},
  options: StartOptions = {},
): void {
  describeOn(ENGINES.slice(-1), name, body, configOverrides, options);
}

function describeOn(
  engines: Engine[],
  name: string,
  body: (harness: () => Harness) => void,
  configOverrides: Partial<Config>,
  options: StartOptions,
): void {
  for (const engine of engines) {
    describe(`${name} [${engine}]`, () => {
      let current: (Harness & { stop(): Promise<void> }) | null = null;
      beforeAll(async () => {
        current = await startHarness(engine, configOverrides, options);
      });
      afterAll(async () => {
        await current?.stop();
      });
      body(() => {
        if (!current) throw new Error("harness not started");
        return current;
      });
    });
  }
}

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Injects a request as the key's owner; an object `payload` is sent as JSON. */
export function call(h: Harness, auth: Auth, method: Method, url: string, payload?: object) {
  return h.vigil.app.inject({ method, url, headers: auth, payload: payload as never });
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
/** Makes a Vigil listen on a free loopback port, for clients outside the process; answers its base URL. */
export async function listenOnLoopback(vigil: Vigil): Promise<string> {
  await vigil.app.listen({ port: 0, host: "127.0.0.1" });
  const address = vigil.app.server.address();
  if (!address || typeof address !== "object") throw new Error("vigil is not listening");
  return `http://127.0.0.1:${address.port}`;
}

export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
