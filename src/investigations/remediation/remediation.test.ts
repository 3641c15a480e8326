// Remediation on request with real parts: a real Prometheus scraping a gauge the test holds far above
// an alert's threshold (so the investigator finds the threshold always crossed), and a real git
// remote: a bare repository the test creates in a temporary directory, holding the rule file. The
// proposal is a diff in the investigation's session; only an approval pushes it, as a new branch.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { amBody, deliverIds, registerTrigger } from "../../../test/alerts.ts";
import { itEnforcesAuth } from "../../../test/auth-matrix.ts";
import { type Auth, call, describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";
import {
  type Exporter,
  type PrometheusProcess,
  requirePrometheus,
  startExporter,
  startPrometheus,
} from "../../../test/prometheus-process.ts";

const RULES = `groups:
  - name: ledger
    rules:
      - alert: LedgerBacklog
        expr: vigil_test_remedy > 1
        for: 1m
        labels:
          severity: page
`;

let exporter: Exporter;
let prometheus: PrometheusProcess;
const temporary: string[] = [];
let sequence = 0;

const gitIn = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  }).trimEnd();

/**
 * A bare repository whose main branch holds rules/ledger.yml; returns its path. `symlinked`: the
 * file is a symbolic link to a rule file outside the repository, which must never be read or written.
 */
function createRemote(symlinked = false): string {
  const root = mkdtempSync(join(tmpdir(), "vigil-remote-"));
  temporary.push(root);
  const bare = join(root, "rules.git");
  const work = join(root, "work");
  gitIn(root, "init", "--quiet", "--bare", "--initial-branch=main", bare);
  gitIn(root, "init", "--quiet", "--initial-branch=main", work);
  execFileSync("mkdir", ["-p", join(work, "rules")]);
  if (symlinked) {
    writeFileSync(join(root, "outside.yml"), RULES);
    execFileSync("ln", ["-s", join(root, "outside.yml"), join(work, "rules", "ledger.yml")]);
  } else {
    writeFileSync(join(work, "rules", "ledger.yml"), RULES);
  }
  writeFileSync(join(work, "README.md"), "alert rules\n");
  gitIn(work, "add", ".");
  gitIn(work, "-c", "user.name=Test", "-c", "user.email=test@localhost", "commit", "--quiet", "-m", "rules");
  gitIn(work, "push", "--quiet", bare, "main");
  return bare;
}

const heads = (bare: string) =>
  gitIn(bare, "--git-dir", bare, "ls-remote", "--heads", bare)
    .split("\n")
    .map((line) => line.split("\t"));

beforeAll(async () => {
  exporter = await startExporter();
  exporter.set('vigil_test_remedy{service="ledger"}', 1000);
  // An hour of it before the test: a threshold "always crossed" needs a series with a past.
  prometheus = await startPrometheus(requirePrometheus(), exporter.url, {
    history: [{ series: 'vigil_test_remedy{service="ledger"}', value: 1000, seconds: 3600 }],
  });
  await prometheus.waitFor("30 samples", "count_over_time(vigil_test_remedy[5m])", (v) => (v ?? 0) >= 30);
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.close();
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

interface Setup {
  mode?: "off" | "on_request";
  git?: boolean;
  prometheus?: boolean;
  symlinked?: boolean;
}

/** A workspace with the app configured, its integrations, and an investigated LedgerBacklog alert. */
async function investigate(h: Harness, auth: Auth, setup: Setup, body: object) {
  const n = ++sequence;
  const bare = createRemote(setup.symlinked);
  if (setup.prometheus ?? true) {
    const created = await call(h, auth, "POST", "/api/v1/integrations", {
      name: `prom-${n}`,
      type: "prometheus",
      url: prometheus.base,
    });
    expect(created.statusCode, created.body).toBe(201);
  }
  if (setup.git ?? true) {
    const created = await call(h, auth, "POST", "/api/v1/integrations", {
      name: `rules-${n}`,
      type: "git",
      url: `file://${bare}`,
      settings: { base_branch: "main" },
      credentials: { token: "not-needed-on-disk" },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ settings: { base_branch: "main" }, has_credentials: true });
  }
  const app = await call(h, auth, "PUT", "/api/v1/apps/sre", {
    config: setup.mode ? { remediation: setup.mode } : {},
  });
  expect(app.statusCode, app.body).toBe(200);
  const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: `am-${n}` });
  const [alertId] = await deliverIds(
    h,
    trigger,
    amBody(
      [
        {
          status: "firing",
          fingerprint: `fp-remedy-${process.pid}-${n}`,
          startsAt: new Date().toISOString(),
          labels: { alertname: "LedgerBacklog", service: "ledger" },
        },
      ],
      { generatorURL: `${prometheus.base}/graph?g0.expr=${encodeURIComponent("vigil_test_remedy > 1")}` },
    ),
  );
  const started = await call(h, auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`, body);
  expect(started.statusCode, started.body).toBe(200);
  const id = started.json().investigation.id as string;
  const done = await waitFor(async () => {
    const read = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
    return ["completed", "failed", "cancelled"].includes(read.status) ? read : undefined;
  }, 60_000);
  expect(done.status).toBe("completed");
  const artifacts = (
    await call(h, auth, "GET", `/platform/api/v1/sessions/${done.guild_session_id}/artifacts`)
  ).json() as { id: string; name: string }[];
  return { id, done, bare, artifacts };
}

const decide = (h: Harness, auth: Auth, id: string, verb: "approve" | "reject", body?: object) =>
  call(h, auth, "POST", `/app/sre/api/v1/investigations/${id}/remediation/${verb}`, body);

const EXPECTED_DIFF = [
  "diff --git a/rules/ledger.yml b/rules/ledger.yml",
  expect.stringMatching(/^index [0-9a-f]+\.\.[0-9a-f]+ 100644$/),
  "--- a/rules/ledger.yml",
  "+++ b/rules/ledger.yml",
  "@@ -2,7 +2,7 @@ groups:",
  "   - name: ledger",
  "     rules:",
  "       - alert: LedgerBacklog",
  "-        expr: vigil_test_remedy > 1",
  "+        expr: vigil_test_remedy > 1100",
  "         for: 1m",
  "         labels:",
  "           severity: page",
  "",
];

describeEachEngine(
  "remediation on request",
  (harness) => {
    it("mode off: the request is recorded as ignored with why, and nothing is proposed", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const { done, bare, artifacts } = await investigate(h, auth, {}, { remediation_requested: true });
      expect(done.structured_rca.plain_summary.verdict).toBe("alert_is_misconfigured");
      expect(done.triage_metadata.remediation_requested).toBe(true);
      expect(done.triage_metadata.remediation).toMatchObject({
        status: "ignored",
        requested_by: "remediation_requested",
        reason: expect.stringContaining("remediation mode is off"),
        diff: null,
      });
      expect(artifacts.map((item) => item.name)).toEqual(["report.md"]);
      expect(heads(bare).map(([, ref]) => ref)).toEqual(["refs/heads/main"]);
    });

    it("on_request: a diff awaits approval; only the approval pushes it as a branch, once", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const { id, done, bare, artifacts } = await investigate(
        h,
        auth,
        { mode: "on_request" },
        { remediation_requested: true },
      );
      const remediation = done.triage_metadata.remediation;
      expect(remediation).toMatchObject({
        status: "proposed",
        requested_by: "remediation_requested",
        integration: expect.stringMatching(/^rules-/),
        base_branch: "main",
        base_commit: heads(bare)[0]?.[0],
        file: "rules/ledger.yml",
        summary: "raise the threshold of LedgerBacklog from > 1 to > 1100",
        branch: null,
        commit: null,
        decided_by: null,
      });
      expect(remediation.diff.split("\n")).toEqual(EXPECTED_DIFF);
      expect(remediation.reasoning).toMatch(
        /held 100% of the window \(the (59|60) min of data before the alert\)/,
      );
      // The proposal is in the session; the remote has no new branch.
      expect(artifacts.map((item) => item.name).sort()).toEqual([
        "remediation.diff",
        "remediation.md",
        "report.md",
      ]);
      const diffArtifact = artifacts.find((item) => item.name === "remediation.diff");
      const download = await call(
        h,
        auth,
        "GET",
        `/platform/api/v1/sessions/${done.guild_session_id}/artifacts/${diffArtifact?.id}/download`,
      );
      expect(download.body).toBe(remediation.diff);
      expect(heads(bare).map(([, ref]) => ref)).toEqual(["refs/heads/main"]);

      // Bad bodies name the field; another tenant sees nothing; none of these pushes.
      for (const [body, field] of [
        [{ branch: "bad..name" }, "branch"],
        [{ branch: "-x" }, "branch"],
        [{ branch: "fix/.hidden" }, "branch"],
        [{ branch: "fix//double" }, "branch"],
        [{ branch: "fix/" }, "branch"],
        [{ branch: "fix/rule.lock" }, "branch"],
        [{ branch: "fix.lock/rule" }, "branch"],
        [{ comment: 5 }, "comment"],
        [{ surprise: true }, "surprise"],
      ] as const) {
        const bad = await decide(h, auth, id, "approve", body);
        expect(bad.statusCode, JSON.stringify(body)).toBe(400);
        expect(bad.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field } });
      }
      const stranger = await h.createKey();
      for (const verb of ["approve", "reject"] as const) {
        const foreign = await decide(h, stranger.auth, id, verb);
        expect(foreign.statusCode).toBe(404);
        expect(foreign.json()).toEqual({
          error: "investigation not found",
          code: "NOT_FOUND",
          details: { id },
        });
      }
      expect(heads(bare).map(([, ref]) => ref)).toEqual(["refs/heads/main"]);

      const approved = await decide(h, auth, id, "approve", { comment: "ship it" });
      expect(approved.statusCode, approved.body).toBe(200);
      const branch = `vigil/remediation-${id.slice(0, 8)}`;
      const after = approved.json().triage_metadata.remediation;
      expect(after).toMatchObject({
        status: "approved",
        branch,
        commit: expect.stringMatching(/^[0-9a-f]{40}$/),
        decided_by: expect.stringMatching(/^user:/),
        decided_at: expect.any(String),
        comment: "ship it",
        error: null,
        diff: remediation.diff,
      });
      expect(heads(bare)).toEqual([
        [expect.any(String), "refs/heads/main"],
        [after.commit, `refs/heads/${branch}`],
      ]);
      expect(gitIn(bare, "--git-dir", bare, "show", `${branch}:rules/ledger.yml`)).toBe(
        RULES.replace("> 1\n", "> 1100\n").trimEnd(),
      );
      expect(gitIn(bare, "--git-dir", bare, "show", "main:rules/ledger.yml")).toBe(RULES.trimEnd());
      expect(gitIn(bare, "--git-dir", bare, "rev-parse", `${branch}^`)).toBe(remediation.base_commit);

      // Approving again answers the same record and pushes nothing more; rejecting now is 409.
      const again = await decide(h, auth, id, "approve");
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(approved.json());
      expect(heads(bare)).toHaveLength(2);
      const late = await decide(h, auth, id, "reject");
      expect(late.statusCode).toBe(409);
      expect(late.json()).toMatchObject({ code: "CONFLICT", details: { id, remediation: "approved" } });
    });

    it("an approval left mid-push by a stopped server is 409 while fresh and taken over once stale", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const { id, bare } = await investigate(
        h,
        auth,
        { mode: "on_request" },
        { remediation_requested: true },
      );
      // What a server that died between its claim and its push leaves behind.
      const leftBehind = async (decidedAt: Date) =>
        h.vigil.services.database.db.execute(sql`
          update investigations set remediation = remediation || ${JSON.stringify({
            status: "approving",
            decided_at: decidedAt.toISOString(),
          })}::jsonb where id = ${id}`);

      await leftBehind(new Date());
      const busy = await decide(h, auth, id, "approve");
      expect(busy.statusCode).toBe(409);
      expect(busy.json()).toMatchObject({ code: "CONFLICT", details: { remediation: "approving" } });
      expect(heads(bare).map(([, ref]) => ref)).toEqual(["refs/heads/main"]);

      await leftBehind(new Date(Date.now() - 60 * 60_000));
      const taken = await decide(h, auth, id, "approve");
      expect(taken.statusCode, taken.body).toBe(200);
      expect(taken.json().triage_metadata.remediation).toMatchObject({ status: "approved" });
      expect(heads(bare).map(([, ref]) => ref)).toContain(`refs/heads/vigil/remediation-${id.slice(0, 8)}`);
    });

    it("an operator_message that asks for a fix counts; reject pushes nothing and approve after it is 409", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const { id, done, bare } = await investigate(
        h,
        auth,
        { mode: "on_request" },
        { operator_message: "Please open a fix PR for this threshold" },
      );
      expect(done.triage_metadata).toMatchObject({
        remediation_requested: true,
        operator_message: "Please open a fix PR for this threshold",
        remediation: { status: "proposed", requested_by: "operator_message" },
      });
      const rejected = await decide(h, auth, id, "reject", { comment: "we will retune it by hand" });
      expect(rejected.statusCode, rejected.body).toBe(200);
      expect(rejected.json().triage_metadata.remediation).toMatchObject({
        status: "rejected",
        comment: "we will retune it by hand",
        branch: null,
        decided_by: expect.stringMatching(/^user:/),
      });
      expect((await decide(h, auth, id, "reject")).statusCode).toBe(200);
      const approve = await decide(h, auth, id, "approve");
      expect(approve.statusCode).toBe(409);
      expect(approve.json()).toMatchObject({ code: "CONFLICT", details: { remediation: "rejected" } });
      expect(heads(bare).map(([, ref]) => ref)).toEqual(["refs/heads/main"]);
    });

    it("says why nothing was proposed: no git integration, no misconfiguration, or no ask", async () => {
      const h = harness();
      // A workspace each, so that one's alerts are not the others' neighbours or storm.
      const noGit = await investigate(
        h,
        (await h.createKey()).auth,
        { mode: "on_request", git: false },
        { remediation_requested: true },
      );
      expect(noGit.done.triage_metadata.remediation).toMatchObject({
        status: "not_proposed",
        reason: expect.stringContaining("no git integration"),
      });
      const unknown = await investigate(
        h,
        (await h.createKey()).auth,
        { mode: "on_request", prometheus: false },
        { remediation_requested: true },
      );
      expect(unknown.done.triage_metadata.remediation).toMatchObject({
        status: "not_proposed",
        reason: expect.stringContaining("the verdict is not_enough_information"),
      });
      expect(heads(unknown.bare)).toHaveLength(1);
      const linked = await investigate(
        h,
        (await h.createKey()).auth,
        { mode: "on_request", symlinked: true },
        { remediation_requested: true },
      );
      expect(linked.done.triage_metadata.remediation).toMatchObject({
        status: "not_proposed",
        reason: expect.stringMatching(/^no rule file of rules-\d+ defines the alert LedgerBacklog$/),
      });
      expect(readFileSync(join(linked.bare, "..", "outside.yml"), "utf8")).toBe(RULES);
      const { auth } = await h.createKey();
      const notAsked = await investigate(
        h,
        auth,
        { mode: "on_request" },
        { operator_message: "do not fix anything" },
      );
      expect(notAsked.done.triage_metadata).toMatchObject({
        remediation_requested: false,
        remediation: null,
      });
      expect(notAsked.artifacts.map((item) => item.name)).toEqual(["report.md"]);
      const nothing = await decide(h, auth, notAsked.id, "approve");
      expect(nothing.statusCode).toBe(409);
      expect(nothing.json()).toMatchObject({ details: { remediation: "none" } });
    });

    it("validates the app's remediation mode and the git integration with 400 naming the field", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const mode = await call(h, auth, "PUT", "/api/v1/apps/sre", { config: { remediation: "always" } });
      expect(mode.statusCode).toBe(400);
      expect(mode.json()).toEqual({
        error: "config.remediation: always is not one of off, on_request",
        code: "VALIDATION_FAILED",
        details: { field: "config.remediation" },
      });
      const cases: [object, string][] = [
        [
          { name: "g1", type: "git", url: "file:///tmp/x.git", settings: { base_branch: "a..b" } },
          "settings.base_branch",
        ],
        [{ name: "g2", type: "git", url: "file:///tmp/x.git", settings: { depth: "1" } }, "settings.depth"],
        [{ name: "g3", type: "git", url: "ext::sh -c touch% /tmp/pwned" }, "url"],
        [{ name: "p1", type: "prometheus", url: "file:///etc/passwd" }, "url"],
      ];
      for (const [body, field] of cases) {
        const response = await call(h, auth, "POST", "/api/v1/integrations", body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(response.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field } });
      }
    });

    /** An investigation of the owner's (no proposal: the matrix stops before the decision). */
    const ownedUrl =
      (verb: "approve" | "reject") =>
      async (h: Harness, owner: { auth: Auth }): Promise<string> => {
        const n = ++sequence;
        const trigger = await registerTrigger(h, owner.auth, {
          source: "alertmanager",
          integration: `am-${n}`,
        });
        const [alertId] = await deliverIds(
          h,
          trigger,
          amBody([
            {
              status: "firing",
              fingerprint: `fp-auth-${process.pid}-${n}`,
              startsAt: new Date().toISOString(),
              labels: { alertname: "Auth" },
            },
          ]),
        );
        const started = await call(h, owner.auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`);
        return `/app/sre/api/v1/investigations/${started.json().investigation.id}/remediation/${verb}`;
      };
    for (const verb of ["approve", "reject"] as const) {
      itEnforcesAuth(harness, {
        method: "POST",
        scope: "sre_investigations_write",
        url: ownedUrl(verb),
        body: {},
        ownedResource: true,
      });
    }
  },
  // Prometheus listens on loopback; the bare repository is on this machine (file://, localhost).
  { integrationAllowedHosts: ["127.0.0.1", "localhost"] },
);
