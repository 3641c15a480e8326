// The console's investigation, Ask and session pages in a real browser (Debian's chromium through
// playwright-core) against a real Vigil on loopback: an alert is opened from the list and
// investigated with the keyboard alone until the verdict shows; Ask, typed and answered from the
// keyboard, asks for a missing input in a form and the run continues in the same session; an
// artifact of that session is downloaded; approving, copying a trigger URL and ignoring work from
// the keyboard. Then every page at a phone's width: nothing scrolls the page sideways, Tab reaches
// every control with a visible focus ring, and text is readable (WCAG AA) in both themes. Last, Use
// this on an ambiguous answer runs that candidate with the request as typed, and a session titled by
// a long URL scrolls no page sideways. Screenshots go to test-artifacts/console.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { deliverIds, registerTrigger } from "../../test/alerts.ts";
import { createApprovedWorkflow, registerAgent } from "../../test/automation-runs.ts";
import {
  ARTIFACTS,
  ensureConsoleBuilt,
  launchChromium,
  lowContrastText,
  sidewaysOverflow,
  tabThrough,
} from "../../test/browser.ts";
import { type Auth, call, describeOnOneEngine, listenOnLoopback } from "../../test/harness.ts";

const WAIT = 60_000;
const STEP = { timeout: 180_000 };
/** A workflow Ask routes to, with an input the request will not name, and a report artifact. */
const RESTART = {
  description: "Restart a Kubernetes deployment with a rolling restart",
  inputs: [
    { name: "service", required: true, pattern: "^[a-z][a-z0-9-]*$" },
    { name: "cluster", required: true, pattern: "^(prod|staging)-[a-z]+$" },
  ],
  routing_examples: ["restart the checkout deployment in prod-eu", "bounce the payments service"],
  stages: [
    {
      id: "report",
      action_type: "write_report",
      config: {
        name: "Restart-Report.md",
        title: "Restart",
        summary: "restarted {{input.service}} in {{input.cluster}}",
        confidence: "high",
      },
    },
  ],
};
/** The host of the tenant's integration: links to it are verified, others are not. */
const TRUSTED = "http://grafana.example:3000";

describeOnOneEngine("web console automation pages in chromium", (harness) => {
  let browser: Browser;
  let page: Page;
  let base = "";
  let key = "";
  let auth: Auth;
  let engine = "";
  let alertId = "";
  let investigationId = "";
  let sessionId = "";

  const shot = (name: string, target: Page = page) =>
    target.screenshot({ path: join(ARTIFACTS, `${engine}-${name}.png`), fullPage: true });

  /** Presses Tab until the focused control is named `name` (its label, text or field name). */
  async function tabTo(name: string, target: Page = page) {
    const focusedName = `(() => {
      const el = document.activeElement;
      return el ? (el.getAttribute("aria-label") || el.getAttribute("name") || el.textContent || "").trim() : "";
    })()`;
    const seen: string[] = [];
    for (let press = 0; press < 150; press++) {
      await target.keyboard.press("Tab");
      const focused = await target.evaluate<string>(focusedName);
      if (focused === name) return;
      seen.push(focused);
    }
    throw new Error(`Tab never reached "${name}"; it went through ${JSON.stringify(seen)}`);
  }
  const focusedField = (target: Page = page) =>
    target.evaluate<string | null>("document.activeElement?.getAttribute('name') ?? null");

  beforeAll(async () => {
    ensureConsoleBuilt();
    mkdirSync(ARTIFACTS, { recursive: true });
    const h = harness();
    engine = h.engine;
    base = await listenOnLoopback(h.vigil);
    ({ key, auth } = await h.createKey({ userName: "oncall" }));

    const integration = await call(h, auth, "POST", "/api/v1/integrations", {
      name: "grafana",
      type: "grafana",
      url: TRUSTED,
    });
    expect(integration.statusCode, integration.body).toBe(201);
    // One alert whose dashboard is on the trusted host and whose runbook is not.
    const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: "am-prod" });
    [alertId = ""] = await deliverIds(
      h,
      trigger,
      JSON.stringify({
        version: "4",
        status: "firing",
        receiver: "vigil",
        groupKey: "{}:{}",
        alerts: [
          {
            status: "firing",
            labels: { alertname: "CheckoutLatencyHigh", service: "checkout", severity: "critical" },
            annotations: {
              summary: "checkout p99 latency above 2s",
              runbook_url: "https://runbooks.elsewhere.example/checkout-latency",
              dashboard_url: `${TRUSTED}/d/checkout`,
            },
            startsAt: new Date().toISOString(),
            endsAt: "0001-01-01T00:00:00Z",
            generatorURL: "http://prometheus.example:9090/graph?g0.expr=latency_p99%3E2",
            fingerprint: "checkout-latency",
          },
        ],
      }),
    );
    expect(alertId).not.toBe("");

    // A workflow Ask routes to, with an input the request will not name, and a report artifact.
    await createApprovedWorkflow(h, auth, { name: "restart-deployment", ...RESTART });
    await registerAgent(h, auth, {
      name: "checkout-triager",
      kind: "llm",
      instructions: "Look at checkout.",
    });

    browser = await launchChromium();
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    page = await context.newPage();
    await page.goto(`${base}/alerts`);
    await page.locator("input[name=apiKey]").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator("header.top").waitFor({ timeout: WAIT });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
  });

  it(
    "opens an alert from the list and investigates it with keys alone, then shows the finished investigation",
    STEP,
    async () => {
      await page.goto(`${base}/alerts`);
      await page.locator("tr.alert-row").first().waitFor({ timeout: WAIT });
      // The list's one alert is selected: Enter opens it; Tab finds Investigate; Enter starts it.
      await expect.poll(() => page.locator("tr.alert-row.selected").count(), { timeout: WAIT }).toBe(1);
      await page.keyboard.press("Enter");
      await page.waitForURL(new RegExp(`/alerts/${alertId}$`), { timeout: WAIT });
      await page.locator("h1").waitFor({ timeout: WAIT });
      await tabTo("Investigate");
      await page.keyboard.press("Enter");
      await page.waitForURL(/\/investigations\/[0-9a-f-]{36}$/, { timeout: WAIT });
      investigationId = page.url().split("/").at(-1) ?? "";

      // The page follows the run until it ends, without a reload.
      await expect.poll(() => page.locator(".inv-status").textContent(), { timeout: WAIT }).toBe("completed");
      const record = (
        await call(harness(), auth, "GET", `/app/sre/api/v1/investigations/${investigationId}`)
      ).json();
      expect(record.status).toBe("completed");
      const verdict = record.structured_rca.plain_summary.verdict as string;
      expect(await page.locator("h2.verdict").getAttribute("data-verdict")).toBe(verdict);
      expect(await page.locator("h2.verdict").textContent()).not.toBe("Investigating…");
      expect(await page.locator("ol.hypotheses > li").count()).toBe(record.hypotheses.length);

      // Verified evidence is a link; unverified evidence is text marked unverified, never a link.
      const verified = record.evidence.filter((e: { verified: boolean }) => e.verified);
      const unverified = record.evidence.filter((e: { verified: boolean }) => !e.verified);
      expect(verified.length).toBeGreaterThan(0);
      expect(unverified.length).toBeGreaterThan(0);
      expect(await page.locator(".evidence li.verified a").count()).toBe(verified.length);
      expect(await page.locator(`.evidence a[href="${verified[0].url}"]`).count()).toBe(1);
      expect(await page.locator(".evidence li.unverified a").count()).toBe(0);
      expect(await page.locator(".evidence li.unverified .badge.warn").count()).toBe(unverified.length);
      expect(await page.locator(".evidence li.unverified").first().textContent()).toContain("unverified");

      // The trace: one node per investigator step, as getExecutionTrace says.
      const trace = (
        await call(harness(), auth, "GET", `/platform/api/v1/executions/${record.guild_trace_id}`)
      ).json();
      await expect
        .poll(() => page.locator("figure.trace g.trace-node").count(), { timeout: WAIT })
        .toBe(trace.nodes.length);
      expect(await page.locator("figure.trace line.trace-edge").count()).toBe(trace.edges.length);
      await shot("investigation");

      // The list links to it, and says which alert it is for (the list carries the alert's id only).
      await page.getByRole("link", { name: "Investigations", exact: true }).first().click();
      await page.locator(`a[href="/investigations/${investigationId}"]`).waitFor({ timeout: WAIT });
      const row = page.locator("tr.investigation-row", {
        has: page.locator(`a[href="/investigations/${investigationId}"]`),
      });
      const alertLink = row.locator(`a[href="/alerts/${alertId}"]`);
      expect(await alertLink.textContent()).toBe(`…${alertId.slice(-8)}`);
      await shot("investigations");
    },
  );

  it("asks for a missing input in a form and continues the run in the same session", STEP, async () => {
    await page.goto(`${base}/ask`);
    await page.locator("textarea[name=message]").waitFor({ timeout: WAIT });
    // From the keyboard alone: Tab to the box, type, Enter asks; the missing input takes the focus.
    await tabTo("What should Vigil do?");
    await page.keyboard.type("restart the payments deployment");
    await page.keyboard.press("Enter");
    await page.locator("form.inputs-form input[name=cluster]").waitFor({ timeout: WAIT });
    expect(await page.locator("h2.decision").getAttribute("data-decision")).toBe("inputs_required");
    expect(await page.locator("tr.candidate").first().textContent()).toContain("restart-deployment");
    const sessionHref = (await page.locator(".ask-result a[href^='/sessions/']").getAttribute("href")) ?? "";
    await expect.poll(() => focusedField(), { timeout: WAIT }).toBe("cluster");
    await shot("ask-inputs");

    await page.keyboard.type("staging-us");
    await page.keyboard.press("Enter");
    await expect
      .poll(() => page.locator("h2.decision").getAttribute("data-decision"), { timeout: WAIT })
      .toBe("continued");
    // The same session, and the run's trace shown until it completes.
    expect(await page.locator(".ask-result a[href^='/sessions/']").getAttribute("href")).toBe(sessionHref);
    await expect
      .poll(() => page.locator("figure.trace").getAttribute("data-status"), { timeout: WAIT })
      .toBe("completed");
    await shot("ask-done");

    sessionId = sessionHref.split("/").at(-1) ?? "";
    const session = (await call(harness(), auth, "GET", `/platform/api/v1/sessions/${sessionId}`)).json();
    expect(session.executions).toHaveLength(1);
    expect(session.executions[0].target_name).toBe("restart-deployment");
  });

  it("lists sessions, shows one with its messages, and downloads its artifact", STEP, async () => {
    await page.goto(`${base}/sessions`);
    await page.locator("input[name=q]").fill("payments");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.locator("tr.session-row").count(), { timeout: WAIT }).toBe(1);
    const sessionHref = (await page.locator("tr.session-row a").getAttribute("href")) ?? "";
    const session = { id: sessionHref.split("/").at(-1) };
    await page.locator("tr.session-row a").click();
    await page.locator("ol.messages li").first().waitFor({ timeout: WAIT });
    expect(await page.locator("ol.messages").textContent()).toContain("restart the payments deployment");
    await page.getByRole("button", { name: "Restart-Report.md" }).waitFor({ timeout: WAIT });
    await shot("session");

    const [download] = await Promise.all([
      page.waitForEvent("download", { timeout: WAIT }),
      page.getByRole("button", { name: "Restart-Report.md" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("Restart-Report.md");
    const saved = await download.path();
    expect(readFileSync(saved, "utf8")).toContain("restarted payments in staging-us");

    const [exported] = await Promise.all([
      page.waitForEvent("download", { timeout: WAIT }),
      page.getByRole("button", { name: "Export" }).click(),
    ]);
    const body = JSON.parse(readFileSync(await exported.path(), "utf8"));
    expect(body.session_id).toBe(session.id);
    expect(body.notes.messages.length).toBeGreaterThan(0);

    // Terminating cannot be undone: the first press (Enter in the reason field) asks, and sends
    // nothing; the confirming button takes the focus, and Enter there terminates.
    const terminations: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST" && request.url().includes("/terminate"))
        terminations.push(request.url());
    });
    await page.getByRole("textbox", { name: "Reason" }).fill("done with it");
    await page.getByRole("textbox", { name: "Reason" }).press("Enter");
    await expect
      .poll(() => page.evaluate("document.activeElement?.textContent"), { timeout: WAIT })
      .toBe("Yes, terminate");
    expect(await page.locator(".confirm-note").textContent()).toContain("cannot be undone");
    expect(terminations).toEqual([]);
    // Escape steps back without terminating; the button takes the focus again.
    await page.keyboard.press("Escape");
    await expect
      .poll(() => page.evaluate("document.activeElement?.textContent"), { timeout: WAIT })
      .toBe("Terminate…");
    expect(terminations).toEqual([]);
    await page.keyboard.press("Enter");
    await expect
      .poll(() => page.evaluate("document.activeElement?.textContent"), { timeout: WAIT })
      .toBe("Yes, terminate");
    await page.keyboard.press("Enter");
    await page.getByText("Terminated.").waitFor({ timeout: WAIT });
    expect(terminations).toHaveLength(1);
    expect(new URL(terminations[0] ?? "").searchParams.get("reason")).toBe("done with it");
  });

  it(
    "approves a draft, copies a trigger URL and its snippet, and ignores an alert, from the keyboard",
    STEP,
    async () => {
      const h = harness();
      const workflow = "/platform/api/v1/workflows/restart-deployment";
      expect((await call(h, auth, "POST", `${workflow}/versions`)).statusCode).toBe(201);
      const draft = await call(h, auth, "PUT", `${workflow}/versions/2`, {
        ...RESTART,
        description: "Restart a Kubernetes deployment, then report",
      });
      expect(draft.statusCode, draft.body).toBe(200);
      await page.goto(`${base}/workflows/restart-deployment`);
      await page.locator("pre.diff").waitFor({ timeout: WAIT });
      await tabTo("Approve v2");
      await page.keyboard.press("Enter");
      await expect
        .poll(async () => (await call(h, auth, "GET", workflow)).json().approved_version, { timeout: WAIT })
        .toBe(2);

      await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
      const [registration] = (await call(h, auth, "GET", "/app/sre/api/v1/alerts/webhook")).json();
      await page.goto(`${base}/registrations`);
      await page.locator("article.registration").first().waitFor({ timeout: WAIT });
      await tabTo("Show");
      await page.keyboard.press("Enter");
      expect(await page.locator("code.url").textContent()).toBe(registration.trigger_url);
      await tabTo("Copy URL");
      await page.keyboard.press("Enter");
      await expect
        .poll(() => page.evaluate<string>("navigator.clipboard.readText()"), { timeout: WAIT })
        .toBe(registration.trigger_url);
      await tabTo("Configure Prometheus Alertmanager");
      await page.keyboard.press("Enter");
      await page.locator("pre.snippet").waitFor({ timeout: WAIT });
      await tabTo("Copy snippet");
      await page.keyboard.press("Enter");
      await expect
        .poll(() => page.evaluate<string>("navigator.clipboard.readText()"), { timeout: WAIT })
        .toContain(`url: "${registration.trigger_url}"`);
      // Where the browser withholds the Clipboard API (plain http from a name other than localhost),
      // Copy still copies, by selecting the text and running the browser's copy command on it.
      await page.evaluate(`
        Object.defineProperty(navigator, 'clipboard', { value: undefined });
        document.addEventListener('copy', () => {
          const field = document.activeElement;
          window.copiedText = field && 'value' in field ? field.value : String(getSelection());
        }, { once: true });`);
      // The first copy's button says "Copied" for a moment: wait for its own name to come back.
      await page.getByRole("button", { name: "Copy URL", exact: true }).waitFor({ timeout: WAIT });
      await tabTo("Copy URL");
      await page.keyboard.press("Enter");
      await expect
        .poll(() => page.evaluate("document.activeElement?.textContent"), { timeout: WAIT })
        .toBe("Copied");
      expect(await page.evaluate("window.copiedText")).toBe(registration.trigger_url);

      // Ignore… opens the reason field, Escape closes it and gives the focus back to the button.
      await page.goto(`${base}/alerts/${alertId}`);
      await page.locator("h1").waitFor({ timeout: WAIT });
      await tabTo("Ignore…");
      await page.keyboard.press("Enter");
      await expect.poll(() => focusedField(), { timeout: WAIT }).toBe("ignore_reason");
      await page.keyboard.press("Escape");
      await expect.poll(() => page.locator("form.ignore-form").count(), { timeout: WAIT }).toBe(0);
      expect(await page.evaluate("document.activeElement?.textContent")).toBe("Ignore…");
      await page.keyboard.press("Enter");
      await expect.poll(() => focusedField(), { timeout: WAIT }).toBe("ignore_reason");
      await page.keyboard.type("maintenance until 14:00");
      await page.keyboard.press("Enter");
      await expect.poll(() => page.locator(".status").textContent(), { timeout: WAIT }).toBe("ignored");
      expect((await call(h, auth, "GET", `/app/sre/api/v1/alerts/${alertId}`)).json().ignore_reason).toBe(
        "maintenance until 14:00",
      );
      // The focus lands on Un-ignore, which Enter presses.
      await expect
        .poll(() => page.evaluate("document.activeElement?.textContent"), { timeout: WAIT })
        .toBe("Un-ignore");
      await page.keyboard.press("Enter");
      await expect.poll(() => page.locator(".status").textContent(), { timeout: WAIT }).toBe("active");
    },
  );

  it("fits every page in a phone's width, reaches every control with Tab, and reads in both themes", {
    timeout: 600_000,
  }, async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
    await phone.addInitScript(`sessionStorage.setItem("vigil.apiKey", ${JSON.stringify(key)})`);
    const small = await phone.newPage();
    const screens: { name: string; path: string; ready: string; open?: () => Promise<void> }[] = [
      { name: "alerts", path: "/alerts", ready: "tr.alert-row" },
      { name: "alert", path: `/alerts/${alertId}`, ready: "ol.timeline li" },
      { name: "investigations", path: "/investigations", ready: "tr.investigation-row" },
      { name: "investigation", path: `/investigations/${investigationId}`, ready: "g.trace-node" },
      {
        name: "ask",
        path: "/ask",
        ready: "textarea[name=message]",
        open: async () => {
          await small.locator("textarea[name=message]").fill("restart the payments deployment");
          await small.locator("textarea[name=message]").press("Enter");
          await small.locator("form.inputs-form input").first().waitFor({ timeout: WAIT });
        },
      },
      { name: "sessions", path: "/sessions", ready: "tr.session-row" },
      { name: "session", path: `/sessions/${sessionId}`, ready: "ul.artifacts li" },
      { name: "workflows", path: "/workflows", ready: "table.plain a" },
      { name: "workflow", path: "/workflows/restart-deployment", ready: "pre.diff" },
      { name: "agents", path: "/agents", ready: "table.plain a" },
      { name: "agent", path: "/agents/checkout-triager", ready: "pre.prose" },
      {
        name: "sources",
        path: "/registrations",
        ready: "article.registration",
        open: () => small.locator("article.registration summary").first().click(),
      },
    ];
    const problems: string[] = [];
    for (const screen of screens) {
      await small.goto(`${base}${screen.path}`);
      await small.locator(screen.ready).first().waitFor({ timeout: WAIT });
      await screen.open?.();
      const overflow = await sidewaysOverflow(small);
      if (overflow > 0) problems.push(`${screen.name}: the page scrolls ${overflow} px sideways`);
      for (const theme of ["light", "dark"]) {
        await small.evaluate(`document.documentElement.dataset.theme = "${theme}"`);
        for (const text of await lowContrastText(small)) problems.push(`${screen.name}, ${theme}: ${text}`);
        await shot(`${screen.name}-phone-${theme}`, small);
      }
      const { unreached, withoutRing } = await tabThrough(small);
      for (const control of unreached) problems.push(`${screen.name}: Tab never reaches "${control}"`);
      for (const control of withoutRing) problems.push(`${screen.name}: no focus ring on "${control}"`);
    }
    await phone.close();
    expect(problems).toEqual([]);
  });

  it("runs the candidate Use this picks with the request as typed, in the same session", STEP, async () => {
    const h = harness();
    // Two more workflows just like restart-deployment (now at its v2): a restart request fits all three.
    const current = { ...RESTART, description: "Restart a Kubernetes deployment, then report" };
    await createApprovedWorkflow(h, auth, { name: "restart-eu", ...current });
    await createApprovedWorkflow(h, auth, { name: "restart-us", ...current });
    const request = "restart checkout in prod-eu";
    const sent: Record<string, unknown>[] = [];
    const record = (message: { method(): string; url(): string; postDataJSON(): unknown }) => {
      if (message.method() === "POST" && message.url().includes("/platform/ask/start"))
        sent.push(message.postDataJSON() as Record<string, unknown>);
    };
    page.on("request", record);
    try {
      await page.goto(`${base}/ask`);
      await page.locator("textarea[name=message]").fill(request);
      await page.locator("textarea[name=message]").press("Enter");
      await expect
        .poll(() => page.locator("h2.decision").getAttribute("data-decision"), { timeout: WAIT })
        .toBe("ambiguous");
      const sessionHref =
        (await page.locator(".ask-result a[href^='/sessions/']").getAttribute("href")) ?? "";
      const askSaid = (await page.locator(".ask-result > p").first().textContent()) ?? "";
      expect(askSaid).toContain("restart-us");

      await page
        .locator("tr.candidate", { has: page.getByText("restart-us", { exact: true }) })
        .getByRole("button", { name: "Use this" })
        .click();
      await expect
        .poll(() => page.locator("h2.decision").getAttribute("data-decision"), { timeout: WAIT })
        .toBe("pinned");
      // The user's request, not Ask's reply, pinned to the candidate, in the same session.
      const sessionId = sessionHref.split("/").at(-1) ?? "";
      expect(sent).toHaveLength(2);
      expect(sent[1]).toEqual({
        candidate_type: "any",
        message: request,
        entity_refs: [{ name: "restart-us", type: "workflow" }],
        session_id: sessionId,
      });
      // The request named both inputs: nothing is asked again, and the run goes to the end.
      expect(await page.locator("form.inputs-form").count()).toBe(0);
      expect(await page.locator(".ask-result").textContent()).toContain(
        "Read from the request: cluster=prod-eu, service=checkout",
      );
      expect(await page.locator(".ask-result a[href^='/sessions/']").getAttribute("href")).toBe(sessionHref);
      await expect
        .poll(() => page.locator("figure.trace").getAttribute("data-status"), { timeout: WAIT })
        .toBe("completed");

      const session = (await call(h, auth, "GET", `/platform/api/v1/sessions/${sessionId}`)).json();
      expect(session.executions.map((run: { target_name: string }) => run.target_name)).toEqual([
        "restart-us",
      ]);
      const said = session.messages
        .filter((message: { role: string }) => message.role === "user")
        .map((message: { content: string }) => message.content);
      expect(said).toEqual([request, request]);
    } finally {
      page.off("request", record);
    }
  });

  it("scrolls no page sideways for a session whose request is a long URL", STEP, async () => {
    // 190 characters without a space or a hyphen (a place to break): the session's title, as the
    // first request is.
    const url = `https://grafana.example.com/d/${"Xk9fQ2bT7w".repeat(14)}?orgId=1&from=now16h`;
    expect(url.length).toBe(190);
    const asked = await call(harness(), auth, "POST", "/platform/api/v1/platform/ask/start", {
      message: `why is ${url} red`,
    });
    expect(asked.statusCode, asked.body).toBe(200);
    const path = `/sessions/${asked.json().session_id}`;
    for (const width of [1366, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${base}${path}`);
      await page.locator("ol.messages li").first().waitFor({ timeout: WAIT });
      expect(await page.locator("article.session h1").textContent()).toContain(url);
      expect(await sidewaysOverflow(page), `at ${width} px`).toBe(0);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
