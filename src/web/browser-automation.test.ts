// The console's investigation, Ask and session pages in a real browser (Debian's chromium through
// playwright-core) against a real Vigil on loopback: an alert is investigated from its page until
// the verdict shows; Ask asks for a missing input in a form and the run continues in the same
// session; an artifact of that session is downloaded. Screenshots go to test-artifacts/console.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { deliverIds, registerTrigger } from "../../test/alerts.ts";
import { createApprovedWorkflow } from "../../test/automation-runs.ts";
import { ARTIFACTS, ensureConsoleBuilt, launchChromium } from "../../test/browser.ts";
import { type Auth, call, describeEachEngine } from "../../test/harness.ts";

const WAIT = 60_000;
const STEP = { timeout: 180_000 };
/** The host of the tenant's integration: links to it are verified, others are not. */
const TRUSTED = "http://grafana.example:3000";

describeEachEngine("web console automation pages in chromium", (harness) => {
  let browser: Browser;
  let page: Page;
  let base = "";
  let key = "";
  let auth: Auth;
  let engine = "";
  let alertId = "";

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `${engine}-${name}.png`), fullPage: true });

  beforeAll(async () => {
    ensureConsoleBuilt();
    mkdirSync(ARTIFACTS, { recursive: true });
    const h = harness();
    engine = h.engine;
    await h.vigil.app.listen({ port: 0, host: "127.0.0.1" });
    const address = h.vigil.app.server.address();
    if (!address || typeof address !== "object") throw new Error("vigil is not listening");
    base = `http://127.0.0.1:${address.port}`;
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
    await createApprovedWorkflow(h, auth, {
      name: "restart-deployment",
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

  it("investigates an alert from its page and shows the finished investigation", STEP, async () => {
    await page.goto(`${base}/alerts/${alertId}`);
    await page.getByRole("button", { name: "Investigate" }).click();
    await page.waitForURL(/\/investigations\/[0-9a-f-]{36}$/, { timeout: WAIT });
    const investigationId = page.url().split("/").at(-1) ?? "";

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

    // The list links to it.
    await page.getByRole("link", { name: "Investigations", exact: true }).first().click();
    await page.locator(`a[href="/investigations/${investigationId}"]`).waitFor({ timeout: WAIT });
    await shot("investigations");
  });

  it("asks for a missing input in a form and continues the run in the same session", STEP, async () => {
    await page.goto(`${base}/ask`);
    await page.locator("textarea[name=message]").fill("restart the payments deployment");
    await page.getByRole("button", { name: "Ask", exact: true }).click();
    await page.locator("form.inputs-form input[name=cluster]").waitFor({ timeout: WAIT });
    expect(await page.locator("h2.decision").getAttribute("data-decision")).toBe("inputs_required");
    expect(await page.locator("tr.candidate").first().textContent()).toContain("restart-deployment");
    const sessionHref = (await page.locator(".ask-result a[href^='/sessions/']").getAttribute("href")) ?? "";
    await shot("ask-inputs");

    await page.locator("form.inputs-form input[name=cluster]").fill("staging-us");
    await page.getByRole("button", { name: "Continue" }).click();
    await expect
      .poll(() => page.locator("h2.decision").getAttribute("data-decision"), { timeout: WAIT })
      .toBe("continued");
    // The same session, and the run's trace shown until it completes.
    expect(await page.locator(".ask-result a[href^='/sessions/']").getAttribute("href")).toBe(sessionHref);
    await expect
      .poll(() => page.locator("figure.trace").getAttribute("data-status"), { timeout: WAIT })
      .toBe("completed");
    await shot("ask-done");

    const sessionId = sessionHref.split("/").at(-1) ?? "";
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

    await page.getByRole("textbox", { name: "Reason" }).fill("done with it");
    await page.getByRole("button", { name: "Terminate" }).click();
    await page.getByText("Terminated.").waitFor({ timeout: WAIT });
  });
});
