// Where the console goes, in a real browser (Debian's chromium through playwright-core) against a real
// Vigil on loopback: a key opens on the first screen it may read (a key that may read none is told
// which scopes the console needs); the investigations list pages back and forth with the history,
// and an empty filter says so; a path the console does not have is "not available"; an agent's page
// says it is ready; a trace's steps are listed whole, with their errors, for the keyboard; a key
// that reads investigations but not automation finds an alert's latest investigation and is told
// which scope its trace needs, without a refused request; a cold load of the alert list asks for it
// early only when the key may read it in the link's org.
import { randomUUID } from "node:crypto";
import type { Browser, Page, Request } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../test/alerts.ts";
import {
  createApprovedWorkflow,
  type Loopback,
  registerAgent,
  settledTrace,
  startAs,
  startLoopback,
} from "../../test/automation-runs.ts";
import {
  ensureConsoleBuilt,
  launchChromium,
  lowContrastText,
  openAndSignIn,
  openSignedIn,
} from "../../test/browser.ts";
import { type Auth, call, describeOnOneEngine, listenOnLoopback } from "../../test/harness.ts";

const WAIT = 30_000;
const STEP = { timeout: 120_000 };
/** One more than the console's page of investigations holds. */
const INVESTIGATIONS = 51;
const NOT_AVAILABLE = "This page is not available on this Vigil.";
/** A stage name longer than a box of the trace graph shows. */
const LONG_STAGE = "Notify the payments on-call channel about the outage";

describeOnOneEngine("web console navigation in chromium", (harness) => {
  let browser: Browser;
  let base = "";
  let owner = { key: "", auth: {} as Auth };
  let loopback: Loopback;
  let sessionId = "";
  let stageError = "";
  /** The alert investigated 51 times. */
  let alertId = "";

  /** A new browser (its own session storage) at `url`, signed in with `key` there. */
  const openFresh = (url: string, key: string) => openSignedIn(browser, url, key, undefined, WAIT);
  const menu = (page: Page) => page.locator("header.top nav a").allTextContents();
  const emptyTitle = (page: Page) => page.locator("main .empty strong").first().textContent();
  const path = (page: Page) => new URL(page.url()).pathname + new URL(page.url()).search;

  beforeAll(async () => {
    ensureConsoleBuilt();
    const h = harness();
    base = await listenOnLoopback(h.vigil);
    owner = await h.createKey({ userName: "oncall" });
    loopback = await startLoopback();

    // One alert, investigated 51 times (force_new forks a new investigation each time).
    const trigger = await registerTrigger(h, owner.auth, { source: "alertmanager", integration: "prod" });
    [alertId = ""] = await deliverIds(
      h,
      trigger,
      amBody([
        {
          status: "firing",
          fingerprint: "fp-nav",
          startsAt: new Date().toISOString(),
          summary: "Checkout latency high",
          labels: { alertname: "CheckoutLatency", severity: "critical" },
        },
      ]),
    );
    for (let n = 0; n < INVESTIGATIONS; n++) {
      const started = await call(h, owner.auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`, {
        force_new: n > 0,
      });
      expect(started.statusCode, started.body).toBeLessThan(300);
    }

    // A ready agent (it has an integration) and one that is not (it has none).
    const integration = await call(h, owner.auth, "POST", "/api/v1/integrations", {
      name: "grafana",
      type: "grafana",
      url: "http://grafana.example:3000",
    });
    expect(integration.statusCode, integration.body).toBe(201);
    await registerAgent(h, owner.auth, { name: "checkout-triager", integrations: ["grafana"] });
    await registerAgent(h, owner.auth, { name: "idle-helper" });

    // A run whose one stage, named longer than a box shows, fails at once (a 404 is not retried).
    await createApprovedWorkflow(h, owner.auth, {
      name: "notify-oncall",
      stages: [
        {
          id: "notify",
          name: LONG_STAGE,
          action_type: "http_request",
          config: { url: `${loopback.url}/missing` },
        },
      ],
    });
    const run = await startAs(h, owner, { target: { type: "workflow", name: "notify-oncall" } });
    sessionId = run.sessionId;
    const trace = await settledTrace(h, owner.auth, run.traceId);
    stageError = trace.nodes.find((node: { id: string }) => node.id === "stage:notify")?.error ?? "";
    expect(stageError).toContain("answered 404");

    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await loopback?.close();
  });

  it("opens on the first screen the key may read, and its logo leads there", STEP, async () => {
    const automation = await harness().createKey({ scopes: ["aios_automation_read"] });
    const page = await openFresh(`${base}/`, automation.key);
    await page.waitForURL((url) => url.pathname === "/workflows", { timeout: WAIT });
    await expect.poll(() => menu(page), { timeout: WAIT }).toEqual(["Workflows", "Agents", "Sessions"]);
    await page.locator("main h1").waitFor({ timeout: WAIT });
    expect(await page.locator("main h1").textContent()).toBe("Workflows");
    expect(await page.locator("main .error").count()).toBe(0);
    expect(await page.locator("a.brand").getAttribute("href")).toBe("/workflows");

    // After signing out and in again (at /signin), the same.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.locator("input[name=apiKey]").fill(automation.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/workflows", { timeout: WAIT });

    // A link to a screen it may not read says which scope that needs, instead of a 403.
    await page.goto(`${base}/alerts`);
    await expect.poll(() => emptyTitle(page), { timeout: WAIT }).toBe("This key may not read Alerts.");
    expect(await page.locator("main .empty").textContent()).toContain("sre_alerts_read");
    expect(await page.locator("main .error").count()).toBe(0);
    await page.locator("main .empty").getByRole("link", { name: "Go to Workflows" }).click();
    await page.waitForURL((url) => url.pathname === "/workflows", { timeout: WAIT });
    await page.context().close();
  });

  it("tells a key that may read no screen which scopes the console needs", STEP, async () => {
    const keysOnly = await harness().createKey({ scopes: ["api_keys_read"] });
    const page = await openFresh(`${base}/`, keysOnly.key);
    await expect
      .poll(() => emptyTitle(page), { timeout: WAIT })
      .toBe("This key may not read any screen of the console.");
    const said = (await page.locator("main .empty").textContent()) ?? "";
    for (const scope of ["sre_alerts_read", "sre_investigations_read", "aios_automation_read"])
      expect(said).toContain(scope);
    expect(path(page)).toBe("/");
    expect(await menu(page)).toEqual([]);
    expect(await page.locator("main .error").count()).toBe(0);
    expect(await page.locator("a.brand").getAttribute("href")).toBe("/");
    await page.context().close();
  });

  it(
    "pages the investigations with Previous and Next, Back and Forward, and says when none match",
    STEP,
    async () => {
      const page = await openFresh(`${base}/investigations`, owner.key);
      const rows = page.locator("tr.investigation-row");
      const pager = page.locator("nav.pager");
      await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(50);
      expect(await pager.locator("span").textContent()).toBe(
        `Page 1 of 2 · ${INVESTIGATIONS} investigations`,
      );
      expect(await pager.getByRole("button", { name: "← Previous" }).isDisabled()).toBe(true);

      await pager.getByRole("button", { name: "Next →" }).click();
      await page.waitForURL((url) => url.searchParams.get("page") === "2", { timeout: WAIT });
      await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(INVESTIGATIONS - 50);
      expect(await pager.locator("span").textContent()).toBe(
        `Page 2 of 2 · ${INVESTIGATIONS} investigations`,
      );
      expect(await pager.getByRole("button", { name: "Next →" }).isDisabled()).toBe(true);

      // Back returns to page 1, in the console; Forward to page 2; Previous to page 1 again.
      await page.goBack();
      await page.waitForURL((url) => url.pathname === "/investigations" && url.search === "", {
        timeout: WAIT,
      });
      await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(50);
      await page.goForward();
      await page.waitForURL((url) => url.searchParams.get("page") === "2", { timeout: WAIT });
      await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(INVESTIGATIONS - 50);
      await pager.getByRole("button", { name: "← Previous" }).click();
      await page.waitForURL((url) => url.pathname === "/investigations" && url.search === "", {
        timeout: WAIT,
      });
      await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(50);

      // A status none has: said as such, not as "none yet"; Back returns to the whole list.
      await page.locator("select").selectOption("cancelled");
      await page.waitForURL((url) => url.searchParams.get("status") === "cancelled", { timeout: WAIT });
      await expect
        .poll(() => emptyTitle(page), { timeout: WAIT })
        .toBe("No investigations match this filter (status cancelled).");
      await page.goBack();
      await page.waitForURL((url) => url.pathname === "/investigations" && url.search === "", {
        timeout: WAIT,
      });
      await expect.poll(() => rows.count(), { timeout: WAIT }).toBe(50);
      await page.context().close();
    },
  );

  it("returns with Back from a later page and from a sort of the alert list", STEP, async () => {
    const h = harness();
    const trigger = await registerTrigger(h, owner.auth, { source: "alertmanager", integration: "nav-list" });
    await deliverIds(
      h,
      trigger,
      amBody(
        ["DiskFull", "MemoryHigh"].map((name) => ({
          status: "firing",
          fingerprint: `fp-${name}`,
          startsAt: new Date().toISOString(),
          summary: name,
          labels: { alertname: name, severity: "warning" },
        })),
      ),
    );
    const page = await openFresh(`${base}/alerts?page_size=1`, owner.key);
    const pager = page.locator("nav.pager");
    const search = () => new URL(page.url()).searchParams;
    await expect.poll(() => page.locator("tr.alert-row").count(), { timeout: WAIT }).toBe(1);
    await pager.getByRole("button", { name: "Next →" }).click();
    await page.waitForURL((url) => url.searchParams.get("page") === "2", { timeout: WAIT });
    await page.goBack();
    await page.waitForURL((url) => url.pathname === "/alerts" && !url.searchParams.has("page"), {
      timeout: WAIT,
    });
    expect(search().get("page_size")).toBe("1");

    await page.getByLabel("Sort", { exact: true }).selectOption("impact");
    await page.waitForURL((url) => url.searchParams.get("sort_by") === "impact", { timeout: WAIT });
    await page.goBack();
    await page.waitForURL((url) => url.pathname === "/alerts" && !url.searchParams.has("sort_by"), {
      timeout: WAIT,
    });
    await page.context().close();
  });

  it("opens the not-available screen for a path the console does not have", STEP, async () => {
    const page = await openFresh(`${base}/workflows`, owner.key);
    for (const wrong of ["/ask/foo", "/registrations/xyz", "/workflows/a/b", "/agents/x/y", "/alerts/a/b"]) {
      await page.goto(`${base}${wrong}`);
      await expect.poll(() => emptyTitle(page), { timeout: WAIT, message: wrong }).toBe(NOT_AVAILABLE);
      expect(await page.locator("main .error").count(), wrong).toBe(0);
      expect(await page.locator("main h1").count(), wrong).toBe(0);
    }
    // The link back goes to the console's first screen.
    await page.locator("main .empty").getByRole("link", { name: "Go to Alerts" }).click();
    await page.waitForURL((url) => url.pathname === "/alerts", { timeout: WAIT });
    await page.context().close();
  });

  it("says a ready agent is ready, and lists a trace's steps whole with their errors", STEP, async () => {
    const page = await openFresh(`${base}/agents/checkout-triager`, owner.key);
    const agent = (
      await call(harness(), owner.auth, "GET", "/platform/api/v1/agents/checkout-triager")
    ).json();
    expect(agent.ready).toBe(true);
    await expect
      .poll(() => page.locator(".readiness").textContent(), { timeout: WAIT })
      .toBe("ready Safe to run unattended.");
    await page.goto(`${base}/agents/idle-helper`);
    await expect
      .poll(() => page.locator(".readiness").textContent(), { timeout: WAIT })
      .toBe("not ready Not safe to run unattended until this is fixed:");
    expect(await page.locator("p.warn").textContent()).toContain("has no integrations attached");
    expect(await lowContrastText(page)).toEqual([]);

    await page.goto(`${base}/sessions/${sessionId}`);
    const steps = page.locator("figure.trace details.trace-steps");
    await steps.waitFor({ timeout: WAIT });
    // The box cuts the label; the list has it whole and the error, open (a step failed) and reached
    // by Tab: its summary is a control, the text is on the page, not in a hover tooltip.
    const step = steps.locator('li[data-step="stage:notify"]');
    await expect.poll(() => step.isVisible(), { timeout: WAIT }).toBe(true);
    expect(await step.textContent()).toContain(LONG_STAGE);
    expect(await step.locator(".trace-step-error").textContent()).toBe(stageError);
    expect(await page.locator('g.trace-node[data-node="stage:notify"] text').first().textContent()).toBe(
      `${LONG_STAGE.slice(0, 21)}…`,
    );
    expect(await lowContrastText(page)).toEqual([]);
    const summary = steps.locator("summary");
    await summary.focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => step.isVisible(), { timeout: WAIT }).toBe(false);
    await page.keyboard.press("Enter");
    await expect.poll(() => step.isVisible(), { timeout: WAIT }).toBe(true);
    await page.context().close();
  });

  /**
   * A new browser context that records what its pages ask the API and what the API refuses (4xx,
   * 5xx), from its first request on: the sign-in and the cold load included.
   */
  async function recordedContext() {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const asked: string[] = [];
    const refused: string[] = [];
    const apiPath = (request: Request) => new URL(request.url()).pathname;
    context.on("request", (request) => {
      if (request.resourceType() === "fetch") asked.push(apiPath(request));
    });
    context.on("response", (response) => {
      if (response.status() >= 400) refused.push(`${response.status()} ${apiPath(response.request())}`);
    });
    return { context, asked, refused, page: await context.newPage() };
  }

  it(
    "links a key that reads investigations to the latest one, and names the scope its trace needs",
    STEP,
    async () => {
      const h = harness();
      const reader = await h.createKey({
        userName: "oncall",
        scopes: ["sre_alerts_read", "sre_investigations_read"],
      });
      const latest = (await readAlert(h, owner.auth, alertId)).investigation as { id: string };
      const { context, asked, refused, page } = await recordedContext();
      try {
        await openAndSignIn(page, `${base}/alerts/${alertId}`, reader.key, WAIT);
        // It may not start one (no Investigate), but it may read them: the latest is a link.
        const link = page.getByRole("link", { name: /^Latest investigation \(/ });
        await link.waitFor({ timeout: WAIT });
        expect(await page.getByRole("button", { name: "Investigate" }).count()).toBe(0);
        await link.click();
        await page.waitForURL((url) => url.pathname === `/investigations/${latest.id}`, { timeout: WAIT });

        // The trace is read with aios_automation_read: not asked for, and said politely.
        const note = page.locator(".needs-scope");
        await note.waitFor({ timeout: WAIT });
        expect(await note.textContent()).toBe(
          "This key may not read the run's trace: it needs the scope aios_automation_read.",
        );
        expect(await page.locator("main .error").count()).toBe(0);
        expect(asked.filter((path) => path.startsWith("/platform/api/v1/executions"))).toEqual([]);
        expect(refused).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );

  it(
    "asks for the alert list on a cold load only when the key may read it in the link's org",
    STEP,
    async () => {
      const list = "/app/sre/api/v1/alerts";
      const automation = await harness().createKey({ scopes: ["aios_automation_read"] });
      // Signed in at /alerts, then reloaded: a key without sre_alerts_read is told which scope it needs.
      const first = await recordedContext();
      try {
        await openAndSignIn(first.page, `${base}/alerts`, automation.key, WAIT);
        await expect
          .poll(() => emptyTitle(first.page), { timeout: WAIT })
          .toBe("This key may not read Alerts.");
        await first.page.reload();
        await expect
          .poll(() => emptyTitle(first.page), { timeout: WAIT })
          .toBe("This key may not read Alerts.");
        // The screen shows once GET /api/v1/me answered; an early read would have been asked before.
        expect(first.asked.filter((path) => path === list)).toEqual([]);
        expect(first.refused).toEqual([]);
      } finally {
        await first.context.close();
      }

      // A link to an org that does not exist, with a key that may read alerts: no 404 asked for.
      const unknown = randomUUID();
      const second = await recordedContext();
      try {
        await openAndSignIn(second.page, `${base}/alerts?org=${unknown}`, owner.key, WAIT);
        const refusedOrg = `This link is for the organization ${unknown}, which this key may not act in.`;
        await expect.poll(() => emptyTitle(second.page), { timeout: WAIT }).toBe(refusedOrg);
        await second.page.reload();
        await expect.poll(() => emptyTitle(second.page), { timeout: WAIT }).toBe(refusedOrg);
        expect(second.asked.filter((path) => path === list)).toEqual([]);
        expect(second.refused).toEqual([]);

        // In its own namespace the list is asked for at once on a reload, beside the caller.
        await second.page.getByRole("button", { name: "Open it in your personal namespace" }).click();
        await second.page.locator("tr.alert-row").first().waitFor({ timeout: WAIT });
        const order: string[] = [];
        second.page.on("request", (request) => {
          if (new URL(request.url()).pathname === list) order.push("list asked");
        });
        second.page.on("response", (response) => {
          if (new URL(response.url()).pathname === "/api/v1/me") order.push("caller answered");
        });
        await second.page.reload();
        await second.page.locator("tr.alert-row").first().waitFor({ timeout: WAIT });
        expect(order[0]).toBe("list asked");
        expect(second.refused).toEqual([]);
      } finally {
        await second.context.close();
      }
    },
  );
});
