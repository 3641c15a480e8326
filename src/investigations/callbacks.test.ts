// The callbacks an investigating agent reports through (sre_submit_investigation_evidence and
// sre_update_investigation_status). Most investigations here run a workflow that hands off to an
// agent that never answers, so only the callbacks move them; one runs the built-in investigator.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../test/alerts.ts";
import { createApprovedWorkflow } from "../../test/automation-runs.ts";
import {
  type Auth,
  call,
  describeEachEngine,
  ENGINES,
  type Harness,
  startHarness,
  waitFor,
} from "../../test/harness.ts";
import { sendWhileHeld } from "../../test/lock-wait.ts";
import { findActiveKey } from "../core/auth/keys.ts";
import { INVESTIGATION_PURPOSE, setInvestigationWorkflowChooser } from "./index.ts";
import { moveInvestigation } from "./lifecycle.ts";

const held: ServerResponse[] = [];
let answering = false;
const agent = createServer((_req, res) => {
  if (answering) res.end("{}");
  else held.push(res);
});

/** The agent holds what it is sent: a run handed to it waits. */
function holdAgent() {
  answering = false;
}

/** The agent answers what it held, and from now on at once: the runs end before Vigil stops. */
function releaseAgent() {
  answering = true;
  for (const res of held.splice(0)) res.end("{}");
}

beforeAll(async () => {
  await new Promise<void>((resolve) => agent.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  for (const res of held) res.destroy();
  agent.closeAllConnections();
  await new Promise((resolve) => agent.close(resolve));
});

let sequence = 0;
const uid = (prefix: string) => `${prefix}-${process.pid}-${++sequence}`;

const PLAIN_SUMMARY = {
  verdict: "real_problem",
  what_broke: "Checkout could not reach its database.",
  what_to_do: "Raise the pool size of checkout-db.",
  how_we_got_here: ["Read the alert", "Read the pool metrics"],
};

interface InvestigationOptions {
  /** false: the built-in investigator runs it. */
  handOff?: boolean;
  generatorURL?: string;
  /** The alert's labels beside its alertname and service. */
  labels?: Record<string, string>;
}

/**
 * An investigation of a new alert. `handOff` (the default): its workflow hands it to the agent, which
 * holds the request, so the investigation stays unfinished until a callback or terminate ends it.
 */
async function startInvestigation(
  h: Harness,
  auth: Auth,
  { handOff = true, generatorURL, labels = {} }: InvestigationOptions = {},
) {
  let remove = () => {};
  if (handOff) {
    const workflow = uid("hand-off");
    const port = (agent.address() as AddressInfo).port;
    await createApprovedWorkflow(h, auth, {
      name: workflow,
      inputs: [
        { name: "investigation_id", required: true },
        { name: "alert_id", required: true },
      ],
      stages: [
        {
          id: "hand_off",
          action_type: "http_request",
          config: { url: `http://127.0.0.1:${port}/investigate`, timeout_ms: 60_000 },
        },
      ],
    });
    remove = setInvestigationWorkflowChooser(async (_db, _tenant, purpose) =>
      purpose === INVESTIGATION_PURPOSE ? workflow : null,
    );
  }
  try {
    const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: uid("am") });
    const [alertId] = await deliverIds(
      h,
      trigger,
      amBody(
        [
          {
            status: "firing",
            fingerprint: uid("fp"),
            startsAt: new Date().toISOString(),
            labels: { alertname: "CheckoutErrors", service: "checkout", ...labels },
          },
        ],
        generatorURL ? { generatorURL } : {},
      ),
    );
    const started = await call(h, auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`);
    expect(started.statusCode, started.body).toBe(200);
    const id: string = started.json().investigation.id;
    const row = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
    return { id, sessionId: row.guild_session_id as string, base: `/app/sre/api/v1/investigations/${id}` };
  } finally {
    remove();
  }
}

const runbook = (title = "Checkout runbook") => ({
  kind: "runbook",
  title,
  url: "https://wiki.example.org/checkout",
  source: "runbook",
});

// RFC 3986 (appendix A) for http(s): authority, path-abempty, query, fragment; each character
// unreserved, a sub-delim, one the part allows, or a percent-encoded octet.
const PCHAR = "(?:[A-Za-z0-9\\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})";
const RFC3986_HTTP_URI = new RegExp(
  "^https?://(?:(?:[A-Za-z0-9\\-._~!$&'()*+,;=:]|%[0-9A-Fa-f]{2})*@)?" +
    "(?:\\[[0-9A-Fa-f:.]+\\]|(?:[A-Za-z0-9\\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?" +
    `(?:/${PCHAR}*)*(?:\\?(?:${PCHAR}|[/?])*)?(?:#(?:${PCHAR}|[/?])*)?$`,
);

describeEachEngine("investigation callbacks", (harness) => {
  beforeAll(holdAgent);
  afterAll(releaseAgent);

  it("evidence: verified and captured_at by Vigil, default descriptions, tool_name only on tool_trace, 400 naming the field", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const integration = await call(h, auth, "POST", "/api/v1/integrations", {
      name: uid("grafana"),
      type: "grafana",
      url: "https://grafana.example.com",
    });
    expect(integration.statusCode, integration.body).toBe(201);
    const { base } = await startInvestigation(h, auth);
    const submit = (evidence: object[]) => call(h, auth, "POST", `${base}/evidence`, { evidence });
    const accepted = await submit([
      { kind: "dashboard", title: "Latency", url: "https://grafana.example.com/d/abc", source: "llm" },
      {
        kind: "log",
        title: "Logs",
        url: "https://evil.example.net/x",
        source: "tool_trace",
        tool_name: "loki_query",
      },
    ]);
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().evidence).toEqual([
      {
        kind: "dashboard",
        title: "Latency",
        url: "https://grafana.example.com/d/abc",
        description: "A dashboard of the affected system around the alert",
        source: "llm",
        tool_name: null,
        verified: true,
        captured_at: expect.any(String),
      },
      {
        kind: "log",
        title: "Logs",
        url: "https://evil.example.net/x",
        description: "Captured by the loki_query tool",
        source: "tool_trace",
        tool_name: "loki_query",
        verified: false,
        captured_at: expect.any(String),
      },
    ]);
    const javascript = await submit([
      { kind: "other", title: "x", url: "javascript:alert(1)", source: "llm" },
    ]);
    expect(javascript.statusCode).toBe(400);
    expect(javascript.json().details.field).toBe("evidence.0.url");
    // Forms the URL parser takes but other clients read as relative or invalid links.
    for (const url of [
      "http:grafana.example.com",
      "https:/grafana.example.com/d",
      "http:\\\\grafana.example.com\\d",
      " https://grafana.example.com",
      "https://grafana.example.com/d\tx",
      // WHATWG keeps this host, RFC 3986 has no form of it.
      "https://grafana{1}.example.com/d",
    ]) {
      const malformed = await submit([
        { kind: "dashboard", title: "ok", url: "https://grafana.example.com/d/ok", source: "llm" },
        { kind: "dashboard", title: "bad", url, source: "llm" },
      ]);
      expect(malformed.statusCode, url).toBe(400);
      expect(malformed.json().details.field, url).toBe("evidence.1.url");
    }
    // The title is a required short label: white space only is none.
    for (const title of ["   ", "\t\n"]) {
      const blank = await submit([runbook(), runbook(title)]);
      expect(blank.statusCode, JSON.stringify(title)).toBe(400);
      expect(blank.json()).toEqual({
        error: "evidence.1.title: must hold text, not only white space",
        code: "VALIDATION_FAILED",
        details: { field: "evidence.1.title" },
      });
    }
    // verified and captured_at are always Vigil's: what the caller claims is ignored. tool_name is
    // set only when source is tool_trace.
    const claimed = await submit([
      {
        kind: "other",
        title: "Claims",
        url: "https://a.example/claims",
        source: "llm",
        tool_name: "t",
        verified: true,
        captured_at: "2001-01-01T00:00:00Z",
      },
      { kind: "trace", title: "No tool", url: "https://a.example/trace", source: "tool_trace" },
    ]);
    expect(claimed.statusCode, claimed.body).toBe(200);
    const [claims, noTool] = claimed.json().evidence.slice(-2);
    expect(claimed.json().evidence).toHaveLength(4);
    expect(claims).toEqual({
      kind: "other",
      title: "Claims",
      url: "https://a.example/claims",
      description: "A related page",
      source: "llm",
      tool_name: null,
      verified: false,
      captured_at: expect.any(String),
    });
    expect(claims.captured_at).not.toBe("2001-01-01T00:00:00.000Z");
    expect(Date.parse(claims.captured_at)).toBeGreaterThan(Date.parse("2020-01-01T00:00:00Z"));
    expect(noTool).toMatchObject({
      source: "tool_trace",
      tool_name: null,
      description: "A distributed trace of an affected request",
    });
  });

  it("evidence URLs are stored as RFC 3986 URIs (the spec's format: uri), from callbacks and the investigator", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const integration = await call(h, auth, "POST", "/api/v1/integrations", {
      name: uid("grafana"),
      type: "grafana",
      // Its host punycoded, as the integration's url is a URI too.
      url: "https://grafana.xn--bcher-kva.example",
    });
    expect(integration.statusCode, integration.body).toBe(201);
    const { base } = await startInvestigation(h, auth);
    const submit = (evidence: object[]) => call(h, auth, "POST", `${base}/evidence`, { evidence });
    // The audit's case: accepted before, and stored verbatim.
    const repro = await submit([{ kind: "log", title: "t", url: "https://h/a>b", source: "llm" }]);
    expect(repro.statusCode, repro.body).toBe(200);
    expect(repro.json().evidence.map((item: { url: string }) => item.url)).toEqual(["https://h/a%3Eb"]);
    const submitted = await submit([
      {
        kind: "dashboard",
        title: "Grafana, its host written in Unicode",
        url: 'https://GRAFANA.bücher.example/d/x?var-q={job="api"}|rate[5m]^`\\#ä #b',
        source: "llm",
      },
      {
        kind: "runbook",
        title: "Wiki",
        url: "https://wiki.example.org/Runbook [DB] ünï",
        source: "runbook",
      },
      {
        kind: "other",
        title: "Stray %",
        url: "https://logs.example.org/x?q=100%&r=%41#a#b{c}",
        source: "llm",
      },
    ]);
    expect(submitted.statusCode, submitted.body).toBe(200);
    // Percent-encoded as the URL parser serializes it, then what it leaves that RFC 3986 does not
    // allow; the host is the one the allowlist reads, so the Unicode one is still verified.
    expect(
      submitted.json().evidence.map((item: { url: string; verified: boolean }) => [item.url, item.verified]),
    ).toEqual([
      ["https://h/a%3Eb", false],
      [
        "https://grafana.xn--bcher-kva.example/d/x?var-q=%7Bjob=%22api%22%7D%7Crate%5B5m%5D%5E%60%5C#%C3%A4%20%23b",
        true,
      ],
      ["https://wiki.example.org/Runbook%20%5BDB%5D%20%C3%BCn%C3%AF", false],
      ["https://logs.example.org/x?q=100%25&r=%41#a%23b%7Bc%7D", false],
    ]);

    // The built-in investigator cites the alert's generatorURL, as Prometheus sends it.
    const builtIn = await startInvestigation(h, auth, {
      handOff: false,
      generatorURL: "http://prom:9090/graph?g0.expr=rate(x[5m])>0.05",
    });
    const done = await waitFor(async () => {
      const read = (await call(h, auth, "GET", builtIn.base)).json();
      return read.status === "completed" ? read : undefined;
    }, 60_000);
    expect(done.evidence).toContainEqual(
      expect.objectContaining({
        kind: "alert_rule",
        url: "http://prom:9090/graph?g0.expr=rate(x%5B5m%5D)%3E0.05",
        source: "tool_trace",
        tool_name: "alert_source",
      }),
    );

    // A link an alert carried that can be no URI (a tab in it) is left out; the investigation ends.
    const tabbed = await startInvestigation(h, auth, {
      handOff: false,
      generatorURL: "http://prom:9090/graph?g0.expr=up\t== 0",
    });
    const ended = await waitFor(async () => {
      const read = (await call(h, auth, "GET", tabbed.base)).json();
      return read.finished_at ? read : undefined;
    }, 60_000);
    expect(ended.status).toBe("completed");
    expect(ended.evidence.filter((item: { tool_name: string }) => item.tool_name === "alert_source")).toEqual(
      [],
    );

    // Every stored link of both passes a strict RFC 3986 check, as a client validating the
    // responses against /openapi.json (ajv-formats' `uri`) does.
    for (const path of [base, builtIn.base]) {
      const read = (await call(h, auth, "GET", path)).json();
      expect(read.evidence.length).toBeGreaterThan(0);
      for (const item of read.evidence) expect(item.url).toMatch(RFC3986_HTTP_URI);
    }
  });

  it("a final investigation takes no more evidence: 409, as its status callback answers", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const refused = async (base: string, id: string, status: string, evidence: unknown[]) => {
      const late = await call(h, auth, "POST", `${base}/evidence`, { evidence: [runbook("Too late")] });
      expect(late.statusCode, late.body).toBe(409);
      const body = {
        error: `investigation ${id} is ${status} and cannot change`,
        code: "CONFLICT",
        details: { id, status },
      };
      expect(late.json()).toEqual(body);
      const moved = await call(h, auth, "POST", `${base}/status`, { status: "running" });
      expect(moved.statusCode).toBe(409);
      expect(moved.json()).toEqual(body);
      expect((await call(h, auth, "GET", base)).json().evidence).toEqual(evidence);
    };

    // Completed or failed by the agent's status callback.
    for (const status of ["completed", "failed"]) {
      const { id, base } = await startInvestigation(h, auth);
      const cited = await call(h, auth, "POST", `${base}/evidence`, { evidence: [runbook()] });
      expect(cited.statusCode, cited.body).toBe(200);
      const ended = await call(h, auth, "POST", `${base}/status`, {
        status,
        result_summary: "The checkout database ran out of connections.",
      });
      expect(ended.statusCode, ended.body).toBe(200);
      await refused(base, id, status, cited.json().evidence);
    }

    // Cancelled: its session was terminated.
    const cancelled = await startInvestigation(h, auth);
    const terminated = await call(
      h,
      auth,
      "POST",
      `/platform/api/v1/sessions/${cancelled.sessionId}/terminate`,
    );
    expect(terminated.json()).toEqual({ cancelled_workflows: 1 });
    await refused(cancelled.base, cancelled.id, "cancelled", []);

    // Completed by the built-in investigator's run.
    const builtIn = await startInvestigation(h, auth, { handOff: false });
    const done = await waitFor(async () => {
      const read = (await call(h, auth, "GET", builtIn.base)).json();
      return read.status === "completed" ? read : undefined;
    }, 60_000);
    await refused(builtIn.base, builtIn.id, "completed", done.evidence);
  });

  it("status: a plain summary, when given, has all its fields; no statement or summary text is blank", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const { base } = await startInvestigation(h, auth);
    const update = (body: object) => call(h, auth, "POST", `${base}/status`, { status: "running", ...body });

    for (const missing of Object.keys(PLAIN_SUMMARY)) {
      const { [missing as keyof typeof PLAIN_SUMMARY]: _left, ...partial } = PLAIN_SUMMARY;
      const response = await update({ plain_summary: partial });
      expect(response.statusCode, missing).toBe(400);
      expect(response.json(), missing).toEqual({
        error: `plain_summary.${missing}: is required`,
        code: "VALIDATION_FAILED",
        details: { field: `plain_summary.${missing}`, location: "body", rule: "required" },
      });
    }
    const verdictOnly = await update({ plain_summary: { verdict: "real_problem" } });
    expect(verdictOnly.statusCode).toBe(400);
    expect(verdictOnly.json().details.field).toBe("plain_summary.what_broke");

    const blanks: [object, string][] = [
      [{ plain_summary: { ...PLAIN_SUMMARY, what_broke: "  " } }, "plain_summary.what_broke"],
      [{ plain_summary: { ...PLAIN_SUMMARY, what_to_do: "\n" } }, "plain_summary.what_to_do"],
      [
        { plain_summary: { ...PLAIN_SUMMARY, how_we_got_here: ["Read the alert", " "] } },
        "plain_summary.how_we_got_here.1",
      ],
      [{ hypotheses: [{ statement: "Pool exhausted" }, { statement: "   " }] }, "hypotheses.1.statement"],
    ];
    for (const [body, field] of blanks) {
      const response = await update(body);
      expect(response.statusCode, field).toBe(400);
      expect(response.json(), field).toEqual({
        error: `${field}: must hold text, not only white space`,
        code: "VALIDATION_FAILED",
        details: { field },
      });
    }
    // Empty is refused by the schema, naming the field the same way.
    for (const [body, field] of [
      [{ hypotheses: [{ statement: "" }] }, "hypotheses.0.statement"],
      [{ plain_summary: { ...PLAIN_SUMMARY, what_to_do: "" } }, "plain_summary.what_to_do"],
      [{ plain_summary: { ...PLAIN_SUMMARY, how_we_got_here: [] } }, "plain_summary.how_we_got_here"],
    ] as [object, string][]) {
      const response = await update(body);
      expect(response.statusCode, field).toBe(400);
      expect(response.json().details.field, field).toBe(field);
    }
    // Nothing refused was stored.
    const untouched = (await call(h, auth, "GET", base)).json();
    expect(untouched).toMatchObject({ status: "queued", structured_rca: null, hypotheses: [] });

    const complete = await update({
      hypotheses: [{ statement: "Pool exhausted", confidence: 0.9, status: "confirmed" }],
      plain_summary: PLAIN_SUMMARY,
    });
    expect(complete.statusCode, complete.body).toBe(200);
    expect(complete.json()).toMatchObject({
      status: "running",
      structured_rca: {
        summary: PLAIN_SUMMARY.what_broke,
        root_cause: "Pool exhausted",
        confidence: 0.9,
        remediation: [PLAIN_SUMMARY.what_to_do],
        plain_summary: PLAIN_SUMMARY,
      },
    });
  });

  it("status: failed without a summary says who reported it failed; a summary given or held is kept", async () => {
    const h = harness();
    const { key, auth } = await h.createKey();
    const owner = await findActiveKey(h.vigil.services.database.db, key);
    const why = `Investigation failed: reported failed by user:${owner?.userId} without a summary`;
    /** The summary of an investigation failed by `body`, after `before`; the alert shows the same. */
    const failWith = async (body: object, before?: object) => {
      const { base } = await startInvestigation(h, auth);
      if (before) expect((await call(h, auth, "POST", `${base}/status`, before)).statusCode).toBe(200);
      const failed = await call(h, auth, "POST", `${base}/status`, { status: "failed", ...body });
      expect(failed.statusCode, failed.body).toBe(200);
      const { alert_id, result_summary } = failed.json();
      expect((await readAlert(h, auth, alert_id)).investigation).toMatchObject({
        status: "failed",
        result_summary,
      });
      return result_summary;
    };

    expect(await failWith({})).toBe(why);
    expect(await failWith({ result_summary: null })).toBe(why);
    expect(await failWith({ result_summary: "The agent lost its Prometheus token." })).toBe(
      "The agent lost its Prometheus token.",
    );
    expect(await failWith({}, { status: "running", result_summary: "Pool metrics unreadable" })).toBe(
      "Pool metrics unreadable",
    );
  });

  it("status: an RCA built from the report names what the alert affects and its rule's expression", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const report = {
      status: "completed",
      hypotheses: [{ statement: "Pool exhausted", confidence: 0.9, status: "confirmed" }],
      plain_summary: PLAIN_SUMMARY,
    };
    const rca = {
      summary: PLAIN_SUMMARY.what_broke,
      root_cause: "Pool exhausted",
      category: "unknown",
      contributing_factors: [],
      remediation: [PLAIN_SUMMARY.what_to_do],
      confidence: 0.9,
      plain_summary: PLAIN_SUMMARY,
    };

    // Labels of the shared vocabulary (kube_cluster_name is a cluster, node a host), as triage reads them.
    const placed = await startInvestigation(h, auth, {
      generatorURL: "http://prom:9090/graph?g0.expr=rate(checkout_errors[5m])>0.05",
      labels: { kube_cluster_name: "prod-eu-west-1", node: "node-7" },
    });
    const reported = await call(h, auth, "POST", `${placed.base}/status`, report);
    expect(reported.statusCode, reported.body).toBe(200);
    expect(reported.json().structured_rca).toEqual({
      ...rca,
      affected: { service: "checkout", host: "node-7", cluster: "prod-eu-west-1" },
      trigger: "rate(checkout_errors[5m])>0.05",
    });
    // Reported without a result_summary, the conclusion's summary reads as the investigator's own.
    expect(reported.json().result_summary).toBe(
      "real_problem: Pool exhausted. Raise the pool size of checkout-db.",
    );

    // What the alert does not name stays null.
    const bare = await startInvestigation(h, auth);
    const unplaced = await call(h, auth, "POST", `${bare.base}/status`, report);
    expect(unplaced.json().structured_rca).toEqual({
      ...rca,
      affected: { service: "checkout", host: null, cluster: null },
      trigger: null,
    });
  });
});

// On PostgreSQL, where a status change and an evidence submission run at once: the evidence takes the
// investigation's row lock, so it waits for a transaction that is making the investigation final, then
// sees the final status and adds nothing.
if (ENGINES.includes("postgres")) {
  describe("evidence beside a status change [postgres]", () => {
    let h: Harness & { stop(): Promise<void> };
    beforeAll(async () => {
      holdAgent();
      h = await startHarness("postgres");
    });
    afterAll(async () => {
      releaseAgent();
      await h?.stop();
    });

    it("waits for the change to commit, then answers 409 and stores nothing", async () => {
      const { auth } = await h.createKey();
      const { id, base } = await startInvestigation(h, auth);
      // The status callback's own write, held open.
      const answer = await sendWhileHeld(
        h.vigil.services.database,
        async (tx) => {
          const now = new Date();
          const moved = await moveInvestigation(
            tx,
            { id },
            { status: "completed", finishedAt: now, updatedAt: now },
          );
          expect(moved?.status).toBe("completed");
        },
        () => call(h, auth, "POST", `${base}/evidence`, { evidence: [runbook()] }),
      );
      expect(answer.statusCode, answer.body).toBe(409);
      expect(answer.json().details).toEqual({ id, status: "completed" });
      expect((await call(h, auth, "GET", base)).json()).toMatchObject({ status: "completed", evidence: [] });
    });
  });
}
