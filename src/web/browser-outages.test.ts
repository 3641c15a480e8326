// The console when Vigil is out, in a real browser (Debian's chromium through playwright-core)
// against a real Vigil on loopback, with Vigil's answers held (a hung Vigil: frozen, or behind a
// network that drops packets) or answered 503 by page.route, and the page's clock driven by
// page.clock: a read Vigil does not answer times out and reads as "not reachable", and the live list
// asks again until it answers; a 503 is an outage too, not a refused request; a change Vigil does not
// answer gives up with a message that its outcome is unknown; a failed refresh of an alert's page
// keeps the page (and the reason being typed) and recovers by itself; the investigations list tells
// apart the alerts of one burst, whose uuidv7 ids share their first characters; the other lists keep
// their rows through an outage as the alert list does; a page whose trace (and artifacts) failed with
// it says so once.
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../test/alerts.ts";
import { ensureConsoleBuilt, launchChromium, signIn } from "../../test/browser.ts";
import { type Auth, describeOnOneEngine, listenOnLoopback } from "../../test/harness.ts";

const WAIT = 30_000;
const STEP = { timeout: 120_000 };
const LIST = "/app/sre/api/v1/alerts";
/** web/src/api/client.ts's deadlines (its module needs a browser, so they are not imported). */
const READ_TIMEOUT_MS = 20_000;
const WRITE_TIMEOUT_MS = 60_000;
/** The live list's and an alert page's refresh intervals. */
const LIST_REFRESH_MS = 10_000;
const ALERT_REFRESH_MS = 15_000;
const BURST = 3;
const UNAVAILABLE = {
  error:
    "the database cannot be reached, refuses Vigil's connections or is at its connection limit: send the request again",
  code: "UNAVAILABLE",
  details: {},
};

describeOnOneEngine("web console during outages in chromium", (harness) => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base = "";
  let key = "";
  let auth: Auth;
  let alertId = "";

  const rows = () => page.locator("tr.alert-row");
  /** Lets the page handle what it was just sent and render: a frame, then the tasks queued by it. */
  const settled = () =>
    page.evaluate("new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))");
  /** Requests the page gave up on (aborted), by path and method. */
  const failed: string[] = [];
  const failedTo = (method: string, path: string) => failed.includes(`${method} ${path}`);
  /** Holds every matching request unanswered until released: Vigil hangs. */
  async function hang(path: string, method = "GET") {
    const held: Route[] = [];
    const matches = (url: URL) => url.pathname === path;
    await page.route(matches, (route) =>
      route.request().method() === method ? held.push(route) : route.fallback(),
    );
    return {
      held,
      release: async () => {
        await page.unroute(matches);
        for (const route of held.splice(0)) await route.abort().catch(() => {});
      },
    };
  }

  /**
   * Answers GET `path` with `body` (as Vigil would), or with 503 UNAVAILABLE while `down` is set:
   * a Vigil whose database is out, for the screens whose data the test makes up.
   */
  async function serve(path: string, body: unknown) {
    const matches = (url: URL) => url.pathname === path;
    const vigil = {
      down: false,
      failed: 0,
      stop: () => page.unroute(matches),
    };
    await page.route(matches, (route) => {
      if (route.request().method() !== "GET") return route.fallback();
      if (!vigil.down) return route.fulfill({ json: body });
      vigil.failed++;
      return route.fulfill({ status: 503, headers: { "retry-after": "5" }, json: UNAVAILABLE });
    });
    return vigil;
  }

  beforeAll(async () => {
    ensureConsoleBuilt();
    const h = harness();
    base = await listenOnLoopback(h.vigil);
    ({ key, auth } = await h.createKey({ userName: "oncall" }));
    const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: "burst" });
    const startsAt = new Date().toISOString();
    [alertId = ""] = await deliverIds(
      h,
      trigger,
      amBody(
        Array.from({ length: BURST }, (_, index) => ({
          status: "firing" as const,
          fingerprint: `fp-burst-${index}`,
          startsAt,
          summary: `Pod crash looping on node-${index}`,
          labels: { alertname: "PodCrashLooping", namespace: `burst-${index}`, severity: "critical" },
        })),
      ),
    );

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    // Before any page loads: the console's timers (refreshes, deadlines) run on this clock.
    await context.clock.install();
    page = await context.newPage();
    page.on("requestfailed", (request) =>
      failed.push(`${request.method()} ${new URL(request.url()).pathname}`),
    );
    await signIn(page, base, key, WAIT);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it(
    "times out a list refresh Vigil does not answer, says it is not reachable, and asks again until it answers",
    STEP,
    async () => {
      await page.goto(`${base}/alerts?integration_names=burst`);
      await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(BURST);
      const vigil = await hang(LIST);
      const banner = page.locator(".unreachable");
      try {
        await page.clock.fastForward(LIST_REFRESH_MS);
        await expect.poll(() => vigil.held.length, { timeout: WAIT }).toBe(1);
        expect(await banner.count()).toBe(0);

        await page.clock.fastForward(READ_TIMEOUT_MS);
        await banner.waitFor({ timeout: WAIT });
        expect(await banner.textContent()).toMatch(
          /^Vigil is not reachable: showing the list as of \d\d:\d\d:\d\d\./,
        );
        expect(await rows().count()).toBe(BURST);
        expect(await page.locator(".alert-list.stale").count()).toBe(1);
        // Given up on, not left running: the next refresh is not stuck behind it.
        await expect.poll(() => failedTo("GET", LIST), { timeout: WAIT }).toBe(true);
        await page.clock.fastForward(LIST_REFRESH_MS);
        await expect.poll(() => vigil.held.length, { timeout: WAIT }).toBe(2);
      } finally {
        await vigil.release();
      }
      // Vigil answers again: the next live refresh brings the list back.
      await page.clock.fastForward(READ_TIMEOUT_MS);
      await page.clock.fastForward(LIST_REFRESH_MS);
      await banner.waitFor({ state: "detached", timeout: WAIT });
      expect(await page.locator(".alert-list.stale").count()).toBe(0);
      expect(await rows().count()).toBe(BURST);
    },
  );

  it("keeps the list, dimmed, with Vigil's words, while Vigil answers 503", STEP, async () => {
    await page.goto(`${base}/alerts?integration_names=burst`);
    await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(BURST);
    const down = (url: URL) => url.pathname === LIST;
    await page.route(down, (route) =>
      route.fulfill({ status: 503, headers: { "retry-after": "5" }, json: UNAVAILABLE }),
    );
    const banner = page.locator(".unreachable");
    try {
      await page.clock.fastForward(LIST_REFRESH_MS);
      await banner.waitFor({ timeout: WAIT });
      const said = (await banner.textContent()) ?? "";
      expect(said).toMatch(/^Vigil is not reachable: showing the list as of \d\d:\d\d:\d\d\./);
      expect(said).toContain(`Vigil answered 503 UNAVAILABLE: ${UNAVAILABLE.error}.`);
      expect(await rows().count()).toBe(BURST);
      expect(await page.locator(".alert-list.stale").count()).toBe(1);
      // One message, the outage's: not also an error box as for a refused request.
      expect(await page.locator(".error").count()).toBe(1);
    } finally {
      await page.unroute(down);
    }
    await page.clock.fastForward(LIST_REFRESH_MS);
    await banner.waitFor({ state: "detached", timeout: WAIT });
    expect(await page.locator(".alert-list.stale").count()).toBe(0);
  });

  it(
    "keeps an alert's page and the reason being typed when a refresh fails, and recovers by itself",
    STEP,
    async () => {
      const path = `${LIST}/${alertId}`;
      await page.goto(`${base}/alerts/${alertId}`);
      await page.locator("ol.timeline li").first().waitFor({ timeout: WAIT });
      await page.getByRole("button", { name: "Ignore…" }).click();
      const reason = page.locator("input[name=ignore_reason]");
      await reason.fill("node drain until 14:00");

      const down = (url: URL) => url.pathname === path || url.pathname === `${path}/history`;
      await page.route(down, (route) => route.abort("connectionrefused"));
      const note = page.locator(".outdated");
      try {
        await page.clock.fastForward(ALERT_REFRESH_MS);
        await note.waitFor({ timeout: WAIT });
        expect(await note.count()).toBe(1);
        expect(await note.textContent()).toMatch(
          /^Vigil is not reachable: showing this as of \d\d:\d\d:\d\d\. It refreshes by itself/,
        );
        expect(await page.locator("h1").textContent()).toBe("PodCrashLooping");
        expect(await page.locator(".labels").textContent()).toContain("namespace=burst-0");
        expect(await page.locator("ol.timeline li").count()).toBeGreaterThan(0);
        expect(await page.getByText("This alert could not be shown.").count()).toBe(0);
        expect(await reason.inputValue()).toBe("node drain until 14:00");
      } finally {
        await page.unroute(down);
      }
      await page.clock.fastForward(ALERT_REFRESH_MS);
      await note.waitFor({ state: "detached", timeout: WAIT });
      expect(await reason.inputValue()).toBe("node drain until 14:00");

      // A first load that gets no answer has nothing to keep: it says so, once the read times out.
      const vigil = await hang(path);
      try {
        await page.goto(`${base}/alerts/${alertId}`);
        await expect.poll(() => vigil.held.length, { timeout: WAIT }).toBe(1);
        await page.clock.fastForward(READ_TIMEOUT_MS);
        await page.getByText("This alert could not be shown.").waitFor({ timeout: WAIT });
        expect(await page.locator(".error").textContent()).toContain("Vigil is not reachable");
      } finally {
        await vigil.release();
      }
    },
  );

  it(
    "gives up on an ignore Vigil does not answer, saying the change may or may not have been applied",
    STEP,
    async () => {
      const path = `${LIST}/${alertId}`;
      await page.goto(`${base}/alerts/${alertId}`);
      await page.getByRole("button", { name: "Ignore…" }).click();
      await page.locator("input[name=ignore_reason]").fill("node drain until 14:00");
      const vigil = await hang(path, "PATCH");
      const ignore = page.getByRole("button", { name: "Ignore", exact: true });
      try {
        await ignore.click();
        await expect.poll(() => vigil.held.length, { timeout: WAIT }).toBe(1);
        await expect.poll(() => ignore.isDisabled(), { timeout: WAIT }).toBe(true);
        // A write has the longer deadline: past a read's, it is still waiting.
        await page.clock.fastForward(READ_TIMEOUT_MS);
        await settled();
        expect(await page.locator(".ignore-form .error").count()).toBe(0);
        expect(await ignore.isDisabled()).toBe(true);

        await page.clock.fastForward(WRITE_TIMEOUT_MS - READ_TIMEOUT_MS);
        const error = page.locator(".ignore-form .error");
        await error.waitFor({ timeout: WAIT });
        expect(await error.textContent()).toBe(
          "Vigil did not answer in time: the change may or may not have been applied. Reload the page to check before trying again.",
        );
        await expect.poll(() => ignore.isDisabled(), { timeout: WAIT }).toBe(false);
        await expect.poll(() => failedTo("PATCH", path), { timeout: WAIT }).toBe(true);
        expect(await page.locator("input[name=ignore_reason]").inputValue()).toBe("node drain until 14:00");
      } finally {
        await vigil.release();
      }
      // The PATCH never reached Vigil.
      expect((await readAlert(harness(), auth, alertId)).status).toBe("active");
    },
  );

  it("tells apart the alerts of one burst in the investigations list", STEP, async () => {
    // Two investigations of alerts created in the same second: their uuidv7 ids share the timestamp
    // at their start, and differ in their random end.
    const alertIds = ["0199a0b1-6c2e-7d41-9f3a-4be1c0d2e3f4", "0199a0b1-6c2f-7a08-8e5b-17ac9d8f6b20"];
    const investigations = alertIds.map((alert_id, index) => ({
      id: `5d0c9b6e-1f2a-4c3d-8e4f-${String(index).padStart(12, "0")}`,
      alert_id,
      status: "completed",
      result_summary: null,
      structured_rca: null,
      started_at: new Date().toISOString(),
      finished_at: null,
    }));
    const listed = (url: URL) => url.pathname === "/app/sre/api/v1/investigations";
    await page.route(listed, (route) =>
      route.fulfill({ json: { investigations, total: 2, page: 1, page_size: 50 } }),
    );
    try {
      await page.goto(`${base}/investigations`);
      const links = page.locator("a.inv-alert");
      await expect.poll(() => links.count(), { timeout: WAIT }).toBe(2);
      const shown = await links.allTextContents();
      expect(new Set(shown).size).toBe(2);
      shown.forEach((text, index) => {
        expect(alertIds[index]?.endsWith(text.replace("…", ""))).toBe(true);
      });
    } finally {
      await page.unroute(listed);
    }
  });

  /** The other lists, with made-up rows; refreshMs: how often each polls (none: only when opened). */
  const now = new Date().toISOString();
  const LISTS = [
    {
      name: "Investigations",
      path: "/investigations",
      api: "/app/sre/api/v1/investigations",
      body: {
        investigations: [
          {
            id: "5d0c9b6e-1f2a-4c3d-8e4f-000000000001",
            alert_id: "0199a0b1-6c2e-7d41-9f3a-4be1c0d2e3f4",
            status: "completed",
            result_summary: "Node drained",
            structured_rca: null,
            started_at: now,
            finished_at: now,
          },
        ],
        total: 1,
        page: 1,
        page_size: 50,
      },
      refreshMs: 5_000,
    },
    {
      name: "Sessions",
      path: "/sessions",
      api: "/platform/api/v1/sessions",
      body: {
        items: [
          {
            id: "s-1",
            title: "Restart checkout",
            first_prompt: "restart checkout",
            initiator: "oncall",
            responder: null,
            status: "completed",
            execution_count: 1,
            total_cost: 0,
            last_activity_at: now,
          },
        ],
        has_more: false,
      },
      refreshMs: 10_000,
    },
    {
      name: "Workflows",
      path: "/workflows",
      api: "/platform/api/v1/workflows",
      body: [{ name: "restart", approved_version: 1, draft_version: null, ready: true, updated_at: now }],
      refreshMs: null,
    },
    {
      name: "Agents",
      path: "/agents",
      api: "/platform/api/v1/agents",
      body: [{ name: "triage", description: "", kind: "llm", ready: true, updated_at: now }],
      refreshMs: null,
    },
  ];
  /** How long a read is fresh (app.tsx's staleTime): a list opened again after it asks Vigil again. */
  const FRESH_MS = 5_000;
  /** How often a screen that does not poll asks again after a refresh failed (ui.tsx's retryWhileStale). */
  const RETRY_MS = 10_000;

  it(
    "keeps the investigations, sessions, workflows and agents lists, dimmed, while Vigil answers 503, and brings them back by itself",
    STEP,
    async () => {
      const listRows = () => page.locator(".table-scroll tbody tr");
      const banner = page.locator(".unreachable");
      const dimmed = page.locator(".table-scroll.stale");
      for (const list of LISTS) {
        const vigil = await serve(list.api, list.body);
        try {
          // A first load that fails has no rows to keep: the error alone.
          vigil.down = true;
          await page.goto(`${base}${list.path}`);
          await page.locator(".error").waitFor({ timeout: WAIT });
          expect(await page.locator(".error").textContent(), list.name).toBe(
            `503 UNAVAILABLE: ${UNAVAILABLE.error}`,
          );
          expect(await banner.count(), list.name).toBe(0);

          vigil.down = false;
          await page.goto(`${base}${list.path}`);
          await expect.poll(() => listRows().count(), { timeout: WAIT }).toBe(1);
          vigil.down = true;
          if (list.refreshMs) await page.clock.fastForward(list.refreshMs);
          else {
            // It does not poll: opened again once its answer is old, it asks Vigil again.
            await page.clock.fastForward(FRESH_MS + 1_000);
            const nav = page.locator("header.top nav");
            await nav.getByRole("link", { name: "Alerts" }).click();
            await page.locator("section.alerts").waitFor({ timeout: WAIT });
            await nav.getByRole("link", { name: list.name }).click();
          }
          await banner.waitFor({ timeout: WAIT });
          const said = (await banner.textContent()) ?? "";
          expect(said, list.name).toMatch(/^Vigil is not reachable: showing the list as of \d\d:\d\d:\d\d\./);
          expect(said, list.name).toContain(`Vigil answered 503 UNAVAILABLE: ${UNAVAILABLE.error}.`);
          expect(said, list.name).toContain("It refreshes by itself once Vigil answers.");
          expect(await listRows().count(), list.name).toBe(1);
          expect(await dimmed.count(), list.name).toBe(1);
          expect(await page.locator(".error").count(), list.name).toBe(1);

          // Vigil answers again: the next refresh brings the list back, without a reload.
          vigil.down = false;
          await page.clock.fastForward(list.refreshMs ?? RETRY_MS);
          await banner.waitFor({ state: "detached", timeout: WAIT });
          expect(await dimmed.count(), list.name).toBe(0);
          expect(await listRows().count(), list.name).toBe(1);
        } finally {
          await vigil.stop();
        }
      }
    },
  );

  /** A run under way, as getExecutionTrace answers: the trace polls while it is not settled. */
  const runningTrace = (traceId: string) => ({
    nodes: [
      { id: "n1", label: "investigate", type: "agent", status: "running", state: "running", error: null },
    ],
    edges: [],
    execution: {
      trace_id: traceId,
      status: "running",
      target_type: "agent",
      total_cost: 0,
      trace_settled: false,
    },
    structured_output: null,
    truncated: false,
  });
  /** The note of a part shown on its own (the trace's, the artifacts'), not the page's. */
  const partNotes = () => page.locator(".trace .outdated, section .outdated");
  /** Polls (1.5 s for a running investigation, session and trace; 2 s for a running session's artifacts). */
  const POLL_MS = 2_000;

  it("says once that an investigation's page is outdated when its trace failed with it", STEP, async () => {
    const id = "5d0c9b6e-1f2a-4c3d-8e4f-000000000009";
    const traceId = "trace-investigation";
    const investigation = await serve(`/app/sre/api/v1/investigations/${id}`, {
      id,
      alert_id: alertId,
      status: "running",
      result_summary: null,
      structured_rca: null,
      hypotheses: [],
      evidence: [],
      prior_incidents: [],
      guild_trace_id: traceId,
      guild_session_id: null,
      parent_investigation_id: null,
      triage_metadata: null,
      started_at: now,
      finished_at: null,
    });
    const trace = await serve(`/platform/api/v1/executions/${traceId}`, runningTrace(traceId));
    const pageNote = page.locator("article.investigation > .outdated");
    const notes = page.locator(".outdated");
    try {
      await page.goto(`${base}/investigations/${id}`);
      await page.locator("g.trace-node").waitFor({ timeout: WAIT });

      // The trace alone fails: it says so itself.
      trace.down = true;
      await page.clock.fastForward(POLL_MS);
      await page.locator(".trace .outdated").waitFor({ timeout: WAIT });
      expect(await pageNote.count()).toBe(0);

      // The page fails too: its note says it for both.
      investigation.down = true;
      await page.clock.fastForward(POLL_MS);
      await pageNote.waitFor({ timeout: WAIT });
      expect(await pageNote.textContent()).toMatch(/^Vigil is not reachable: showing this as of/);
      expect(await notes.count()).toBe(1);
      expect(await page.locator(".error").count()).toBe(1);
      expect(await page.locator("g.trace-node").count()).toBe(1);
      // Still failing, still one note.
      const failed = trace.failed;
      await page.clock.fastForward(POLL_MS);
      await expect.poll(() => trace.failed, { timeout: WAIT }).toBeGreaterThan(failed);
      await settled();
      expect(await notes.count()).toBe(1);

      // Vigil answers again: every note goes.
      investigation.down = false;
      trace.down = false;
      await page.clock.fastForward(POLL_MS);
      await notes.first().waitFor({ state: "detached", timeout: WAIT });
      expect(await notes.count()).toBe(0);
      expect(await partNotes().count()).toBe(0);
    } finally {
      await investigation.stop();
      await trace.stop();
    }
  });

  it(
    "says once that a session's page is outdated when its trace and artifacts failed with it",
    STEP,
    async () => {
      const id = "s-running";
      const traceId = "trace-session";
      const session = await serve(`/platform/api/v1/sessions/${id}`, {
        id,
        title: "Restart checkout",
        first_prompt: "restart checkout",
        initiator: "oncall",
        responder: null,
        status: "running",
        summary: null,
        total_cost: 0,
        last_activity_at: now,
        messages: [],
        executions: [
          {
            run_id: "run-1",
            trace_id: traceId,
            target_type: "agent",
            target_name: "triage",
            workflow_version: null,
            cancelled: false,
            status: "running",
            error: null,
            started_at: now,
            total_cost: 0,
          },
        ],
      });
      const artifacts = await serve(`/platform/api/v1/sessions/${id}/artifacts`, [
        { id: "a-1", name: "report.md", mime_type: "text/markdown", size_bytes: 12, created_at: now },
      ]);
      const trace = await serve(`/platform/api/v1/executions/${traceId}`, runningTrace(traceId));
      const pageNote = page.locator("article.session > .outdated");
      const notes = page.locator(".outdated");
      try {
        await page.goto(`${base}/sessions/${id}`);
        await page.locator("g.trace-node").waitFor({ timeout: WAIT });
        await page.locator("ul.artifacts li").waitFor({ timeout: WAIT });

        // The trace and the artifacts fail: each says so itself, kept on screen.
        trace.down = true;
        artifacts.down = true;
        await page.clock.fastForward(POLL_MS);
        await expect.poll(() => partNotes().count(), { timeout: WAIT }).toBe(2);
        expect(await pageNote.count()).toBe(0);
        expect(await page.locator("ul.artifacts li").count()).toBe(1);

        // The page fails too: its note says it for all.
        session.down = true;
        await page.clock.fastForward(POLL_MS);
        await pageNote.waitFor({ timeout: WAIT });
        expect(await notes.count()).toBe(1);
        expect(await page.locator(".error").count()).toBe(1);
        expect(await page.locator("g.trace-node").count()).toBe(1);
        expect(await page.locator("ul.artifacts li").count()).toBe(1);

        // Vigil answers again: every note goes.
        session.down = false;
        trace.down = false;
        artifacts.down = false;
        await page.clock.fastForward(POLL_MS);
        await notes.first().waitFor({ state: "detached", timeout: WAIT });
        expect(await page.locator(".error").count()).toBe(0);
      } finally {
        await session.stop();
        await artifacts.stop();
        await trace.stop();
      }
    },
  );
});
