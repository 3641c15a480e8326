// The console when Vigil is out, in a real browser (Debian's chromium through playwright-core)
// against a real Vigil on loopback, with Vigil's answers held (a hung Vigil: frozen, or behind a
// network that drops packets) or answered 503 by page.route, and the page's clock driven by
// page.clock: a read Vigil does not answer times out and reads as "not reachable", and the live list
// asks again until it answers; a 503 is an outage too, not a refused request; a change Vigil does not
// answer gives up with a message that its outcome is unknown; a failed refresh of an alert's page
// keeps the page (and the reason being typed) and recovers by itself; the investigations list tells
// apart the alerts of one burst, whose uuidv7 ids share their first characters.
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
  error: "the database cannot be reached or is at its connection limit: send the request again",
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
});
