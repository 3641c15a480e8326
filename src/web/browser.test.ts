// The console in a real browser (Debian's chromium through playwright-core) against a real Vigil on
// loopback, fed real fixtures through the real trigger: sign-in, filters, sorts, storms (the whole
// storm's view has no status tabs: it lists the storm's active alerts), keyboard, the alert page,
// ignore and un-ignore, sources, workflows, the org switcher, sign-out, phone width and the dark
// theme. Screenshots of the main pages go to test-artifacts/console (git-ignored).
import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { registerAlerts } from "../../test/alerts.ts";
import { registerAgent } from "../../test/automation-runs.ts";
import {
  ARTIFACTS,
  ensureConsoleBuilt,
  launchChromium,
  lowContrastText,
  signIn,
} from "../../test/browser.ts";
import { fixtureFiles, readFixture } from "../../test/fixtures.ts";
import {
  type Auth,
  call,
  describeOnOneEngine,
  type Harness,
  listenOnLoopback,
  waitFor,
} from "../../test/harness.ts";

const SOURCES = ["alertmanager", "grafana", "datadog", "pagerduty", "opsgenie", "sentry", "uptime-kuma"];
const WAIT = 30_000;
/** The titles of the storm the test sends ("CheckoutErrors in checkout", ...). */
const STORM_QUERY = encodeURIComponent("in checkout");
const STEP = { timeout: 180_000 };

interface AlertList {
  alerts: { id: string; title: string; external_uid: string; storm_id: string | null; source_type: string }[];
  total: number;
  total_exact: boolean;
  summary: { total_active: number; needs_attention: number };
}

describeOnOneEngine(
  "web console in chromium",
  (harness) => {
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let base = "";
    let key = "";
    let auth: Auth;
    let engine = "";

    const list = async (query = ""): Promise<AlertList> => {
      const response = await call(harness(), auth, "GET", `/app/sre/api/v1/alerts?page_size=50${query}`);
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    };
    const shot = (name: string, target: Page = page) =>
      target.screenshot({ path: join(ARTIFACTS, `${engine}-${name}.png`), fullPage: true });
    const rows = (target: Page = page) => target.locator("tr.alert-row");
    /** Polls the number of alert rows until it is `count`. */
    const expectRows = (count: number, target: Page = page) =>
      expect.poll(() => rows(target).count(), { timeout: WAIT }).toBe(count);

    /** Posts every fixture of a source to a new registration's trigger URL, over HTTP. */
    async function ingestFixtures(h: Harness, source: string, query = "") {
      const registration = await registerAlerts(
        h,
        auth,
        { source, integration: `${source}-prod`, classify_mode: "immediate" },
        query,
      );
      for (const file of fixtureFiles(source)) {
        const response = await fetch(`${base}/platform${registration.platform_webhook_url}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: readFixture(source, file),
        });
        expect(response.status, `${source}/${file}: ${await response.clone().text()}`).toBe(202);
      }
    }

    beforeAll(async () => {
      ensureConsoleBuilt();
      mkdirSync(ARTIFACTS, { recursive: true });
      const h = harness();
      engine = h.engine;
      base = await listenOnLoopback(h.vigil);
      ({ key, auth } = await h.createKey({ userName: "oncall" }));

      for (const source of SOURCES) await ingestFixtures(h, source);
      // Three co-firing alerts of one namespace, now: a storm the correlator forms.
      const storm = await registerAlerts(h, auth, {
        source: "alertmanager",
        integration: "checkout",
        classify_mode: "immediate",
      });
      const startsAt = new Date().toISOString();
      const body = {
        version: "4",
        status: "firing",
        alerts: ["CheckoutErrors", "CheckoutLatency", "CheckoutPodRestarts"].map((alertname, index) => ({
          status: "firing",
          labels: { alertname, namespace: "checkout", cluster: "prod-eu", severity: "warning" },
          annotations: { summary: `${alertname} in checkout` },
          startsAt,
          fingerprint: `checkout-${index}`,
        })),
      };
      const delivered = await fetch(`${base}/platform${storm.platform_webhook_url}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(delivered.status).toBe(202);

      // Let storms form and triage finish, so the page and the API answer the same.
      let state = "";
      await waitFor(async () => {
        const stormed = (await list(`&q=${STORM_QUERY}`)).alerts.filter((alert) => alert.storm_id);
        const progress = (
          await call(h, auth, "GET", "/app/sre/api/v1/alerts/categorization/summary")
        ).json() as { in_progress: number; is_running: boolean };
        state = `storm members ${stormed.length}, triage ${JSON.stringify(progress)}`;
        return stormed.length === 3 && progress.in_progress === 0 && !progress.is_running ? true : undefined;
      }, 90_000).catch((err) => {
        throw new Error(`${err.message}: ${state}`);
      });

      browser = await launchChromium();
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
    }, 240_000);

    afterAll(async () => {
      await browser?.close();
    });

    it("shows nothing without a key, refuses a wrong one in plain words, and signs in", STEP, async () => {
      await page.goto(`${base}/alerts`);
      await page.locator("input[name=apiKey]").waitFor({ timeout: WAIT });
      expect(await rows().count()).toBe(0);
      await shot("sign-in");
      // Unknown, or too short to be a key: said in the form's words, not the API's header talk.
      for (const wrong of [`vgl_${"x".repeat(40)}`, "short"]) {
        await page.goto(`${base}/alerts`);
        await page.locator("input[name=apiKey]").fill(wrong);
        await page.getByRole("button", { name: "Sign in" }).click();
        await expect
          .poll(() => page.locator(".error").textContent(), { timeout: WAIT })
          .toBe("That API key was not accepted: it is unknown, revoked or mistyped.");
      }

      await page.locator("input[name=apiKey]").fill(key);
      await page.getByRole("button", { name: "Sign in" }).click();
      const active = await list();
      await expectRows(Math.min(50, active.total));
      await expect
        .poll(() => page.locator(".summary-total strong").textContent(), { timeout: WAIT })
        .toBe(String(active.summary.total_active));
      await expect
        .poll(() => page.locator(".count.att-needs_attention strong").textContent(), { timeout: WAIT })
        .toBe(String(active.summary.needs_attention));
      await shot("alerts");
    });

    it(
      "filters by source, severity, attention and text, and sorts by impact, as the API does",
      STEP,
      async () => {
        await page.locator("select[aria-label=Source]").selectOption("grafana");
        await page.waitForURL(/source_type=grafana/, { timeout: WAIT });
        await expectRows((await list("&source_type=grafana")).total);
        const sources = await page.locator("tr.alert-row td.wide.muted").allTextContents();
        expect(sources.every((text) => text.startsWith("grafana"))).toBe(true);

        await page.locator("select[aria-label=Source]").selectOption("");
        await page.locator("select[aria-label=Severity]").selectOption("Critical");
        await page.waitForURL(/signal_severity=Critical/, { timeout: WAIT });
        await expectRows((await list("&signal_severity=Critical")).total);
        await page.locator("select[aria-label=Severity]").selectOption("");

        await page.locator(".count.att-needs_attention").click();
        await page.waitForURL(/attention=needs_attention/, { timeout: WAIT });
        await expectRows((await list("&attention=needs_attention")).total);
        await page.locator(".count.att-needs_attention").click();

        await page.locator("input[name=q]").fill("crash");
        await page.locator("input[name=q]").press("Enter");
        await page.waitForURL(/q=crash/, { timeout: WAIT });
        const crash = await list("&q=crash");
        expect(crash.total).toBeGreaterThan(0);
        await expectRows(crash.total);
        await shot("alerts-filtered");
        await page.locator("input[name=q]").fill("");
        await page.locator("input[name=q]").press("Enter");

        // More matches than the search count limit (4 here), all on one page: the page is the
        // whole list, so its total is exact.
        const matches = (await list("&q=high")).alerts.length;
        expect(matches).toBeGreaterThan(4);
        await page.goto(`${base}/alerts?q=high`);
        const pager = page.locator(".pager span");

        await expect
          .poll(() => pager.textContent(), { timeout: WAIT })
          .toBe(`Page 1 of 1 · ${matches} alerts`);
        // One alert a page: past the count limit the total is a lower bound, shown as such, and
        // never below the page on screen.
        await page.goto(`${base}/alerts?q=high&page_size=1&page=${matches}`);
        await expect
          .poll(() => pager.textContent(), { timeout: WAIT })
          .toBe(`Page ${matches} of ${matches}+ · ${matches}+ alerts`);
        await expectRows(1);
        // Past the end of a list counted only up to the limit: no claim that it all fits on a page,
        // and the way back is the page before (the capped count's last page is only a lower bound).
        await page.goto(`${base}/alerts?q=high&page_size=1&page=${matches + 1}`);
        await expect
          .poll(() => page.locator(".empty").textContent(), { timeout: WAIT })
          .toBe(
            `Page ${matches + 1} is past the end of this list.4+ alerts match: go back to page ${matches} or the first page.`,
          );
        await page.goto(`${base}/alerts`);

        await page.locator("select[aria-label=Sort]").selectOption("impact");
        await page.waitForURL(/sort_by=impact/, { timeout: WAIT });
        const byImpact = await list("&sort_by=impact");
        const first = byImpact.alerts[0];
        if (!first) throw new Error("no alerts");
        // The first row is the top alert, or the storm it opens (storm members are gathered at its place).
        const firstTitle = page.locator("tr.alert-row a.alert-title").first();
        await expect
          .poll(() => firstTitle.getAttribute("href"), { timeout: WAIT })
          .toMatch(first.storm_id ? /^\/alerts\// : new RegExp(`/alerts/${first.id}$`));
        await page.locator("select[aria-label=Sort]").selectOption("severity");
      },
    );

    it("shows a storm as a group with its cause, and filters to the whole storm", STEP, async () => {
      await page.goto(`${base}/alerts?q=${STORM_QUERY}`);
      const head = page.locator("tr.storm-head");
      await head.waitFor({ timeout: WAIT });
      expect(await head.textContent()).toContain("3 alerts on this page");
      const stormId = (await list(`&q=${STORM_QUERY}`)).alerts[0]?.storm_id;
      await head.getByRole("button", { name: "Whole storm" }).click();
      await page.waitForURL(new RegExp(`storm_id=${stormId}`), { timeout: WAIT });
      const members = (await list(`&storm_id=${stormId}`)).total;
      await expectRows(members);
      await shot("storm");

      // A storm lists its active members whatever the status asked (the API's rule): no tab offers
      // a filter it would not apply, and a link from the Ignored tab lists the same members.
      const note = page.locator(".storm-view");
      expect(await page.getByRole("tab").count()).toBe(0);
      expect(await note.textContent()).toContain("its active alerts");
      await page.goto(`${base}/alerts?storm_id=${stormId}&status=ignored`);
      await note.waitFor({ timeout: WAIT });
      await expectRows(members);
      expect(await page.getByRole("tab").count()).toBe(0);
      // Leaving the storm brings the tabs back, on the tab the link named.
      await page.getByRole("button", { name: /^Storm / }).click();
      await page.waitForURL((url) => !url.searchParams.has("storm_id"), { timeout: WAIT });
      await expect
        .poll(() => page.getByRole("tab", { selected: true }).textContent(), { timeout: WAIT })
        .toBe("Ignored");
    });

    it("moves with j and k, opens with Enter, and searches with /", STEP, async () => {
      await page.goto(`${base}/alerts`);
      await rows().first().waitFor({ timeout: WAIT });
      await page.keyboard.press("j");
      await page.keyboard.press("j");
      await page.keyboard.press("k");
      const selected = page.locator("tr.alert-row.selected a.alert-title");
      const second = await rows().nth(1).locator("a.alert-title").getAttribute("href");
      expect(await selected.getAttribute("href")).toBe(second);
      // Triage may still re-rank the list while the keys are pressed: Enter opens whichever alert
      // is selected then, an alert page either way.
      const opening = await selected.getAttribute("href");
      await page.keyboard.press("Enter");
      await page.waitForURL((url) => url.pathname !== "/alerts" && url.pathname.startsWith("/alerts/"), {
        timeout: WAIT,
      });
      expect([second, opening]).toContain(new URL(page.url()).pathname);
      await page.goBack();
      await rows().first().waitFor({ timeout: WAIT });
      await page.keyboard.press("/");
      expect(await page.evaluate("document.activeElement?.getAttribute('name')")).toBe("q");
    });

    it(
      "opens an alert from the list and by its external_uid: fields, labels, history, raw payload",
      STEP,
      async () => {
        const [alert] = (await list("&q=crash&source_type=alertmanager")).alerts;
        if (!alert) throw new Error("the crash-looping fixture is missing");
        await page.goto(`${base}/alerts?q=crash&source_type=alertmanager`);
        await page.locator(`a.alert-title[href="/alerts/${alert.id}"]`).click();
        await page.waitForURL(new RegExp(`/alerts/${alert.id}$`), { timeout: WAIT });
        await expect.poll(() => page.locator("h1").textContent(), { timeout: WAIT }).toBe(alert.title);
        expect(await page.locator(".labels").textContent()).toContain("namespace=payments");
        expect(await page.locator("ol.timeline").textContent()).toContain("created");
        // Pretty-printed: one field a line, indented.
        expect(await page.locator("pre.raw").textContent()).toContain('\n  "version": "4"');
        expect(await page.locator(".fields").textContent()).toContain(alert.external_uid);
        await shot("alert");

        await page.goto(`${base}/alerts/${encodeURIComponent(alert.external_uid)}`);
        await expect.poll(() => page.locator("h1").textContent(), { timeout: WAIT }).toBe(alert.title);
        // This Vigil investigates and the key may start one (browser-automation.test.ts presses it).
        expect(await page.getByRole("button", { name: "Investigate" }).count()).toBe(1);
      },
    );

    it("ignores an alert with a reason, lists it under Ignored, and un-ignores it", STEP, async () => {
      const [alert] = (await list("&q=crash&source_type=alertmanager")).alerts;
      if (!alert) throw new Error("the crash-looping fixture is missing");
      const h = harness();
      await page.goto(`${base}/alerts/${alert.id}`);
      await page.getByRole("button", { name: "Ignore…" }).click();
      await page.locator("input[name=ignore_reason]").fill("known rollout, ends 14:00");
      await page.getByRole("button", { name: "Ignore", exact: true }).click();
      await expect.poll(() => page.locator(".status").textContent(), { timeout: WAIT }).toBe("ignored");
      const ignored = (await call(h, auth, "GET", `/app/sre/api/v1/alerts/${alert.id}`)).json();
      expect(ignored).toMatchObject({ status: "ignored", ignore_reason: "known rollout, ends 14:00" });
      await expect
        .poll(() => page.locator("ol.timeline").textContent(), { timeout: WAIT })
        .toContain("ignored");

      await page.goto(`${base}/alerts?status=ignored`);
      await page.locator(`a.alert-title[href="/alerts/${alert.id}"]`).click();
      await page.getByRole("button", { name: "Un-ignore" }).click();
      await expect.poll(() => page.locator(".status").textContent(), { timeout: WAIT }).toBe("active");
      expect((await call(h, auth, "GET", `/app/sre/api/v1/alerts/${alert.id}`)).json().status).toBe("active");
    });

    it(
      "sets an analyst's attention with why, and the list and the alert's history show it",
      STEP,
      async () => {
        const [alert] = (await list("&q=crash&source_type=alertmanager")).alerts;
        if (!alert) throw new Error("the crash-looping fixture is missing");
        const h = harness();
        await page.goto(`${base}/alerts/${alert.id}`);
        await page.getByRole("button", { name: "Set attention…" }).click();
        // The choice takes the focus, so a keyboard user picks at once.
        await expect
          .poll(() => page.evaluate("document.activeElement?.getAttribute('name')"), { timeout: WAIT })
          .toBe("attention");
        await page.locator("select[name=attention]").selectOption("false_positive");
        await page.locator("input[name=attention_reason]").fill("flaps on every deploy");
        await page.getByRole("button", { name: "Save" }).click();
        await expect
          .poll(() => page.locator(".alert-page .card .att").first().textContent(), { timeout: WAIT })
          .toBe("False positive");
        const changed = (await call(h, auth, "GET", `/app/sre/api/v1/alerts/${alert.id}`)).json();
        expect(changed).toMatchObject({
          attention: "false_positive",
          attention_reason: "flaps on every deploy",
        });
        await expect
          .poll(() => page.locator("ol.timeline").textContent(), { timeout: WAIT })
          .toContain("flaps on every deploy");
        // The button stands in the form's place again, focused.
        expect(await page.evaluate("document.activeElement?.textContent")).toBe("Set attention…");

        await page.goto(`${base}/alerts?attention=false_positive`);
        await page.locator(`a.alert-title[href="/alerts/${alert.id}"]`).click();

        // Classify again hands the alert back to the classifier, whose result replaces the analyst's.
        await page.getByRole("button", { name: "Classify again" }).click();
        const reclassified = async () =>
          (await call(h, auth, "GET", `/app/sre/api/v1/alerts/${alert.id}`)).json() as {
            analysis_status: string;
            attention_reason: string;
          };
        await expect
          .poll(() => page.locator("ol.timeline").textContent(), { timeout: WAIT })
          .toContain("reclassify_requested");
        await expect
          .poll(async () => (await reclassified()).analysis_status, { timeout: WAIT })
          .toBe("completed");
        expect((await reclassified()).attention_reason).not.toBe("flaps on every deploy");
      },
    );

    it("shows the API's error message for a bad filter and for an unknown alert", STEP, async () => {
      await page.goto(`${base}/alerts?signal_severity=Loud`);
      await expect
        .poll(() => page.locator(".error").first().textContent(), { timeout: WAIT })
        .toContain("signal_severity");
      await page.goto(`${base}/alerts/${randomUUID()}`);
      await expect
        .poll(() => page.locator(".error").first().textContent(), { timeout: WAIT })
        .toContain("404");
    });

    it("lists sources with their trigger URL and a ready-to-paste snippet", STEP, async () => {
      const registrations = (await call(harness(), auth, "GET", "/app/sre/api/v1/alerts/webhook")).json();
      await page.goto(`${base}/registrations`);
      await expect
        .poll(() => page.locator("article.registration").count(), { timeout: WAIT })
        .toBe(registrations.length);
      const card = page.locator('article.registration[data-source="alertmanager"]').first();
      expect(await card.locator("code.url").textContent()).not.toMatch(/apiKey=whk_/);
      await card.getByRole("button", { name: "Show" }).click();
      const url = await card.locator("code.url").textContent();
      expect(url).toMatch(/\/webhooks\/trigger\?apiKey=whk_/);
      await card.locator("summary").click();
      const snippet = await card.locator("pre.snippet").textContent();
      expect(snippet).toContain("webhook_configs:");
      expect(snippet).toContain(url);
      await shot("sources");
    });

    it(
      "shows workflows with versions, a diff between them, and approves a draft; lists agents",
      STEP,
      async () => {
        const h = harness();
        const name = "restart-checkout";
        const stage = { id: "report", action_type: "write_report" };
        expect(
          (
            await call(h, auth, "POST", "/platform/api/v1/workflows", {
              name,
              description: "first",
              stages: [stage],
            })
          ).statusCode,
        ).toBe(201);
        expect(
          (await call(h, auth, "POST", `/platform/api/v1/workflows/${name}/versions/1/approve`)).statusCode,
        ).toBe(200);
        expect((await call(h, auth, "POST", `/platform/api/v1/workflows/${name}/versions`)).statusCode).toBe(
          201,
        );
        const second = {
          description: "second",
          stages: [stage, { id: "notify", action_type: "write_report", depends_on: ["report"] }],
        };
        expect(
          (await call(h, auth, "PUT", `/platform/api/v1/workflows/${name}/versions/2`, second)).statusCode,
        ).toBe(200);

        await page.goto(`${base}/workflows`);
        await page.getByRole("link", { name }).click();
        await page.waitForURL(new RegExp(`/workflows/${name}$`), { timeout: WAIT });
        const diff = page.locator("pre.diff");
        await diff.waitFor({ timeout: WAIT });
        expect(await diff.locator(".diff-added").allTextContents()).toContain('+   "description": "second",');
        expect(await diff.locator(".diff-removed").allTextContents()).toContain(
          '-   "description": "first",',
        );
        await shot("workflow");
        await page.getByRole("button", { name: "Approve v2" }).click();
        await expect
          .poll(
            async () =>
              (await call(h, auth, "GET", `/platform/api/v1/workflows/${name}`)).json().approved_version,
            {
              timeout: WAIT,
            },
          )
          .toBe(2);

        await registerAgent(h, auth, {
          name: "checkout-triager",
          kind: "llm",
          instructions: "Look at checkout.",
        });
        await page.goto(`${base}/agents`);
        await page.getByRole("link", { name: "checkout-triager" }).click();
        await expect
          .poll(() => page.locator("pre.prose").textContent(), { timeout: WAIT })
          .toBe("Look at checkout.");
      },
    );

    it("switches between the personal namespace and an org", STEP, async () => {
      const h = harness();
      const org = await h.createOrg("payments-team");
      const member = await h.createKey({ orgIds: [org] });
      const registration = await registerAlerts(
        h,
        member.auth,
        { source: "alertmanager", integration: "org" },
        `?orgId=${org}`,
      );
      const response = await fetch(`${base}/platform${registration.platform_webhook_url}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: readFixture("alertmanager", "firing-single-critical.json"),
      });
      expect(response.status).toBe(202);

      const orgPage = await context.newPage();
      await signIn(orgPage, base, member.key, WAIT);
      await orgPage.locator(".empty").waitFor({ timeout: WAIT });
      expect(await orgPage.locator(".empty").textContent()).toContain("No active alerts");
      await orgPage.locator("select[aria-label=Organization]").selectOption({ label: "payments-team" });
      await expectRows(1, orgPage);
      await shot("org", orgPage);
      await orgPage.close();
    });

    it("offers a read-only key only what it may read, and no actions", STEP, async () => {
      // The same user as the main key, so the same alerts, but only sre_alerts_read.
      const reader = await harness().createKey({ userName: "oncall", scopes: ["sre_alerts_read"] });
      const readerPage = await context.newPage();
      await signIn(readerPage, base, reader.key, WAIT);
      // The navigation fills once /api/v1/me answers.
      await expect
        .poll(() => readerPage.locator("header.top nav a").allTextContents(), { timeout: WAIT })
        .toEqual(["Alerts", "Sources"]);
      await rows(readerPage).first().waitFor({ timeout: WAIT });
      const [alert] = (await list()).alerts;
      if (!alert) throw new Error("no alerts");
      await readerPage.goto(`${base}/alerts/${alert.id}`);
      await expect.poll(() => readerPage.locator("h1").textContent(), { timeout: WAIT }).toBe(alert.title);
      expect(await readerPage.getByRole("button", { name: "Ignore…" }).count()).toBe(0);
      expect(await readerPage.getByRole("button", { name: "Set attention…" }).count()).toBe(0);
      expect(await readerPage.getByRole("button", { name: "Classify again" }).count()).toBe(0);
      await readerPage.goto(`${base}/registrations`);
      await readerPage.locator("article.registration").first().waitFor({ timeout: WAIT });
      expect(await readerPage.getByRole("button", { name: "Register" }).count()).toBe(0);
      expect(await readerPage.getByRole("button", { name: "Rotate token" }).count()).toBe(0);
      await readerPage.close();
    });

    it("is usable at a phone's width and in the dark theme", STEP, async () => {
      const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
      const small = await phone.newPage();
      await signIn(small, base, key, WAIT);
      await rows(small).first().waitFor({ timeout: WAIT });
      await shot("alerts-phone", small);
      expect(await small.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
      await small.locator("tr.alert-row a.alert-title").first().click();
      await small.locator("h1").waitFor({ timeout: WAIT });
      await shot("alert-phone", small);
      await phone.close();

      await page.goto(`${base}/alerts`);
      await page.getByRole("button", { name: "Dark" }).click();
      expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("dark");
      await rows().first().waitFor({ timeout: WAIT });
      await shot("alerts-dark");
      // Every severity, attention, storm role and badge of the fixtures, readable in both themes.
      for (const view of ["/alerts", `/alerts?q=${STORM_QUERY}`]) {
        await page.goto(`${base}${view}`);
        await rows().first().waitFor({ timeout: WAIT });
        expect(await lowContrastText(page)).toEqual([]);
        await page.getByRole("button", { name: "Light" }).click();
        expect(await lowContrastText(page)).toEqual([]);
        await page.getByRole("button", { name: "Dark" }).click();
      }
      await page.getByRole("button", { name: "Light" }).click();
    });

    it("signs out and forgets the key", STEP, async () => {
      await page.goto(`${base}/alerts`);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.locator("input[name=apiKey]").waitFor({ timeout: WAIT });
      expect(await page.evaluate("sessionStorage.getItem('vigil.apiKey')")).toBeNull();
      await page.reload();
      await page.locator("input[name=apiKey]").waitFor({ timeout: WAIT });
      expect(await rows().count()).toBe(0);
    });
  },
  // A small search count limit, so that a search shows a total that is a lower bound ("4+").
  { searchCountLimit: 4 },
);
