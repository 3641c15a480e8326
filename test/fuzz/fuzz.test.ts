// The fuzz suite (README.md beside it). `npm test` runs a short seeded pass; `npm run fuzz` runs it
// for FUZZ_SECONDS. Fails on any 5xx, any crash (unhandled rejection, uncaught exception, the
// server gone) and any 202 whose alerts or invocation do not read back. Prints counts by area.
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SOURCE_TYPES, type SourceType } from "../../src/alerts/sources/index.ts";
import { fixtureFiles, readFixture } from "../fixtures.ts";
import { describeEachEngine, ENGINES, type Harness } from "../harness.ts";
import { fuzzOperation, sortedOperations } from "./api.ts";
import { describeFinding, type Finding, FuzzClient, type LogLine } from "./client.ts";
import {
  fuzzTarget,
  hookTarget,
  readLists,
  registrationTarget,
  sweepExamples,
  type Target,
} from "./deliveries.ts";
import { type Operation, operationsOf, SchemaBook } from "./openapi.ts";
import { Resources } from "./resources.ts";
import type { Budget } from "./runner.ts";
import { fuzzTransport, rawCases } from "./transport.ts";

// ---- the budget ----

const env = process.env;
const FULL = Boolean(env.FUZZ_SECONDS || env.FUZZ_RUNS);
const SEED = Number(env.FUZZ_SEED || 20_240_514);
/**
 * Fuzzing time per engine, startup excluded: the length of the full run; for the short run a bound
 * it stays well within (its runs are counted), so that a loaded machine still ends in time.
 */
const SECONDS = Number(env.FUZZ_SECONDS || 90) / ENGINES.length;
/** Random runs per property (one property per delivery target and per operation). */
const RUNS = Number(env.FUZZ_RUNS || (FULL ? 1_000_000_000 : 8));
/** Sweeps per delivery target (every one of them in a full run), before its random runs. */
const SWEEPS_PER_TARGET = FULL ? Number.POSITIVE_INFINITY : 3;
for (const [name, value] of [
  ["FUZZ_SEED", SEED],
  ["FUZZ_SECONDS", SECONDS],
  ["FUZZ_RUNS", RUNS],
] as const) {
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number`);
}

/** Shares of the time per test; they add up to 1. */
const SHARES = { deliveries: 0.44, hooks: 0.06, api: 0.44, transport: 0.06 } as const;

/** A test's vitest timeout: the default in the short run, its share and a margin in the full one. */
const timeoutFor = (share: number) => (FULL ? Math.ceil(share * SECONDS * 1000) + 60_000 : undefined);

/** Splits `ms` among properties as they run: each gets an equal part of what is left. */
function slicer(totalMs: number, count: number) {
  const deadline = Date.now() + totalMs;
  let left = count;
  return (): Budget => {
    const timeMs = Math.max(0, deadline - Date.now()) / Math.max(left, 1);
    left -= 1;
    return { seed: SEED, numRuns: RUNS, timeMs };
  };
}

// ---- the server's log, kept in memory ----

const logLines: LogLine[] = [];
const CONFIG = {
  // Loopback only: an integration URL or an http_request stage may name nothing else.
  integrationAllowedHosts: ["127.0.0.1"],
  automationHttpAllowedHosts: ["127.0.0.1"],
};

const SOURCE_GROUPS: SourceType[][] = [0, 1, 2, 3].map((group) =>
  SOURCE_TYPES.filter((_source, index) => index % 4 === group),
);
const API_GROUPS: { name: string; tags: string[] }[] = [
  { name: "keys, orgs, integrations, alert sync", tags: ["keys", "orgs", "integrations", "alert sync"] },
  { name: "webhooks", tags: ["webhooks"] },
  { name: "alerts, alert webhooks", tags: ["alerts", "alert webhooks"] },
  // Everything else, any tag added later included.
  { name: "agents, workflows, executions, sessions", tags: [] },
];

const HOOK_BODIES = [
  { name: "message.json", body: JSON.stringify({ message: "checkout is down" }) },
  {
    name: "inputs.json",
    body: JSON.stringify({ message: "disk full", service: "checkout", severity: "critical", count: 3 }),
  },
  { name: "alertmanager.json", body: readFixture("alertmanager", fixtureFiles("alertmanager")[0] as string) },
  { name: "grafana.json", body: readFixture("grafana", fixtureFiles("grafana")[0] as string) },
];

describeEachEngine(
  "fuzz",
  (harness) => {
    let h: Harness;
    let client: FuzzClient;
    let resources: Resources;
    let book: SchemaBook;
    let operations: Operation[] = [];
    let skipped: string[] = [];
    const walked = new Set<string>();
    let port = 0;
    const crashes: string[] = [];
    const onRejection = (reason: unknown) => {
      crashes.push(
        `unhandled rejection during ${client?.current ?? "(between requests)"}: ${String((reason as Error)?.stack ?? reason)}`,
      );
    };
    const onException = (err: Error) => {
      crashes.push(
        `uncaught exception during ${client?.current ?? "(between requests)"}: ${err.stack ?? err}`,
      );
    };

    /** Findings added while `run` ran, as text: the test fails with them. */
    async function collecting(run: () => Promise<void>): Promise<string[]> {
      const before = client.findings.length;
      await run();
      return client.findings.slice(before).map(describeFinding);
    }

    beforeAll(async () => {
      h = harness();
      process.on("unhandledRejection", onRejection);
      process.on("uncaughtException", onException);
      client = new FuzzClient(() => h.vigil.app, `fz-${h.engine}`, logLines);
      const key = await h.createKey();
      resources = new Resources(
        () => h.vigil.app,
        key.auth,
        async () => (await h.createKey()).id,
      );
      await resources.create();
      const doc = (await h.vigil.app.inject({ url: "/openapi.json" })).json();
      book = new SchemaBook(doc);
      ({ operations, skipped } = operationsOf(doc));
      operations = sortedOperations(operations);
      await h.vigil.app.listen({ host: "127.0.0.1", port: 0 });
      port = (h.vigil.app.server.address() as AddressInfo).port;
    });

    afterAll(() => {
      process.off("unhandledRejection", onRejection);
      process.off("uncaughtException", onException);
      if (!client) return;
      const mode = FULL ? `full run, ${SECONDS}s` : "short run";
      console.log(
        `${client.table(`fuzz [${h.engine}] ${mode}, seed ${SEED}, runs per property ${FULL && !env.FUZZ_RUNS ? "unbounded" : RUNS}`)}\n` +
          `findings: ${client.findings.length}` +
          (client.findings.length ? `\n${client.findings.map(describeFinding).join("\n")}` : ""),
      );
      const background = logLines.filter((line) => line.reqId === null && line.level >= 50);
      if (background.length > 0) {
        console.log(
          `server errors outside requests (jobs): ${background.length}\n${background
            .slice(0, 10)
            .map((line) => `  ${line.line.trim()}`)
            .join("\n")}`,
        );
      }
    });

    SOURCE_GROUPS.forEach((sources) => {
      it(
        `deliveries: every fixture of ${sources.join(", ")}, mutated`,
        async () => {
          const next = slicer((SHARES.deliveries / SOURCE_GROUPS.length) * SECONDS * 1000, sources.length);
          const found = await collecting(async () => {
            for (const source of sources) {
              const offset = SOURCE_TYPES.indexOf(source) * SWEEPS_PER_TARGET;
              const registration = resources.registrations.get(source);
              if (!registration) throw new Error(`no registration for ${source}`);
              const fixtures = fixtureFiles(source).map((name) => ({
                name,
                body: readFixture(source, name),
              }));
              const target: Target = registrationTarget(registration, fixtures);
              const sweeps = sweepExamples(
                SWEEPS_PER_TARGET,
                Number.isFinite(offset) ? offset : 0,
                fixtures.length,
              );
              await fuzzTarget(
                client,
                resources.auth,
                target,
                next(),
                h.vigil.services.config.webhookBodyLimitBytes,
                sweeps,
              );
              const listed = await readLists(client, resources.auth, source);
              if (listed) client.keep(listed);
            }
          });
          expect(found).toEqual([]);
        },
        timeoutFor(SHARES.deliveries / SOURCE_GROUPS.length),
      );
    });

    it(
      "deliveries: agent and workflow webhooks, mutated",
      async () => {
        const next = slicer(SHARES.hooks * SECONDS * 1000, resources.deliveryHooks.length);
        const found = await collecting(async () => {
          for (const [i, hook] of resources.deliveryHooks.entries()) {
            const sweeps = sweepExamples(SWEEPS_PER_TARGET, i * 5, HOOK_BODIES.length);
            const target = hookTarget(hook, HOOK_BODIES);
            await fuzzTarget(
              client,
              resources.auth,
              target,
              next(),
              h.vigil.services.config.webhookBodyLimitBytes,
              sweeps,
            );
          }
        });
        expect(found).toEqual([]);
      },
      timeoutFor(SHARES.hooks),
    );

    API_GROUPS.forEach((group) => {
      it(
        `API: every body and parameter of ${group.name}, mutated`,
        async () => {
          const claimed = API_GROUPS.flatMap((other) => other.tags);
          const mine = operations.filter((op) =>
            group.tags.length > 0 ? group.tags.includes(op.tag) : !claimed.includes(op.tag),
          );
          expect(mine.length).toBeGreaterThan(0);
          const next = slicer((SHARES.api / API_GROUPS.length) * SECONDS * 1000, mine.length);
          const found = await collecting(async () => {
            await resources.ensure();
            for (const op of mine) {
              await fuzzOperation(client, book, resources, op, next());
              walked.add(op.id);
            }
          });
          expect(found).toEqual([]);
        },
        timeoutFor(SHARES.api / API_GROUPS.length),
      );
    });

    it("the API walk covered every operation of the OpenAPI document", () => {
      expect([...walked].sort()).toEqual(operations.map((op) => op.id).sort());
      // The trigger is the deliveries' area; the probes take no input.
      expect(skipped.sort()).toEqual(["getHealth", "getReadiness", "triggerWebhook"]);
    });

    it(
      "transport: cut, lying and malformed requests on a real socket",
      async () => {
        const registration = resources.registrations.get("alertmanager");
        if (!registration) throw new Error("no alertmanager registration");
        const cases = rawCases(registration.triggerPath, resources.auth.authorization);
        const found = await collecting(async () => {
          await fuzzTransport(client, port, cases, {
            seed: SEED,
            numRuns: RUNS * 4,
            timeMs: SHARES.transport * SECONDS * 1000,
          });
        });
        expect(found).toEqual([]);
      },
      timeoutFor(SHARES.transport),
    );

    it("no crash: no unhandled rejection or exception, and the server still answers over HTTP", async () => {
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      const crashFindings: Finding[] = client.findings.filter((finding) => finding.kind === "crash");
      expect([...crashes, ...crashFindings.map(describeFinding)]).toEqual([]);
    });
  },
  CONFIG,
  { logger: FuzzClient.logger(logLines) },
);
