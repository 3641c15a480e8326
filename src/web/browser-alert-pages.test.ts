// The alert console's edges in a real browser (Debian's chromium through playwright-core) against a
// real Vigil on loopback: ignoring from a page opened by external_uid shows at once, the history says
// what an operator set (ignore reason, attention and its reason), a 512-character title scrolls no
// page sideways, clearing the filters empties the integrations field, a failed list shows no empty
// state and a page past the end leads back, a source's snippet keeps its token masked until Show, a
// key revoked while signed in returns to sign-in saying so, a path that answers no alert (the
// registrations' /alerts/webhook) says so instead of crashing, a long Azure ResourceId scrolls
// neither its alert's page nor its investigation's sideways at a phone's width, the forms send what
// is typed (a source registered with Enter pressed at once, an Ignore reason not kept from a
// cancelled one, Set attention sent with Enter from its select), and each screen names itself in
// the tab's title.
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, readHistory, registerTrigger } from "../../test/alerts.ts";
import { ensureConsoleBuilt, launchChromium, sidewaysOverflow, signIn } from "../../test/browser.ts";
import { readFixture } from "../../test/fixtures.ts";
import { type Auth, call, describeOnOneEngine, listenOnLoopback, waitFor } from "../../test/harness.ts";

const WAIT = 30_000;
const STEP = { timeout: 120_000 };
/** One word of 512 characters: an alertname with no place to break. */
const LONG_NAME = `Long${"X".repeat(508)}`;
/** Much wider than the window, in any font: what the short summary keeps of the title is longer. */
const LONG_WORD = LONG_NAME.slice(0, 150);
/** The external_uid (Alertmanager's fingerprint) the ignore test opens its alert by. */
const EXTERNAL_UID = "fp-ignore-by-uid";
/** More than a page of 50, so the list has a last page other than the first. */
const BULK = 55;
/** The Azure Monitor fixture's resource: one 125-character word, in the alert's triage and its verdict. */
const RESOURCE_ID =
  "/subscriptions/12345a-1234b-123c-123d-12345678e/resourceGroups/TEST/providers/Microsoft.Compute/virtualMachines/testvm";

describeOnOneEngine("web console alert pages in chromium", (harness) => {
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base = "";
  let key = "";
  let auth: Auth;
  let longId = "";
  /** The bulk alerts' ids: the form tests change some of them, each its own. */
  let bulkIds: string[] = [];

  beforeAll(async () => {
    ensureConsoleBuilt();
    const h = harness();
    base = await listenOnLoopback(h.vigil);
    ({ key, auth } = await h.createKey({ userName: "oncall" }));

    const startsAt = new Date().toISOString();
    const triaged = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "edges",
      classify_mode: "immediate",
    });
    const ids = await deliverIds(
      h,
      triaged,
      amBody([
        {
          status: "firing",
          fingerprint: "fp-long",
          startsAt,
          labels: { alertname: LONG_NAME, namespace: "long", severity: "critical" },
        },
        {
          status: "firing",
          fingerprint: EXTERNAL_UID,
          startsAt,
          labels: { alertname: "DiskFilling", namespace: "storage", severity: "warning" },
        },
      ]),
    );
    longId = ids[0] ?? "";
    // A page and a bit more, left to the batch classifier: they only fill the list.
    const bulk = await registerTrigger(h, auth, { source: "alertmanager", integration: "bulk" });
    bulkIds = await deliverIds(
      h,
      bulk,
      amBody(
        Array.from({ length: BULK }, (_, index) => ({
          status: "firing" as const,
          fingerprint: `fp-bulk-${index}`,
          startsAt,
          labels: { alertname: `Bulk${index}`, namespace: `bulk-${index}`, severity: "info" },
        })),
      ),
    );
    // Triage done, so the long title's summary and reason are on its pages.
    await waitFor(async () => {
      const alert = await readAlert(h, auth, longId);
      return alert.analysis_status === "completed" || alert.analysis_status === "failed" ? true : undefined;
    }, 60_000);

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    page = await context.newPage();
    await signIn(page, base, key, WAIT);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it(
    "ignores and un-ignores at once on a page opened by external_uid, with the reason in the history",
    STEP,
    async () => {
      const h = harness();
      const path = `/app/sre/api/v1/alerts/${encodeURIComponent(EXTERNAL_UID)}`;
      // A tab of its own, whose alert reads (by external_uid) after the first are held unanswered:
      // the page can only learn of the change from the answer to its own PATCH.
      const tab = await context.newPage();
      await signIn(tab, base, key, WAIT);
      await tab.goto(`${base}/alerts/${encodeURIComponent(EXTERNAL_UID)}`);
      await expect.poll(() => tab.locator("h1").textContent(), { timeout: WAIT }).toBe("DiskFilling");
      const held: Route[] = [];
      await tab.route(
        (url) => url.pathname === path,
        (route) => (route.request().method() === "GET" ? held.push(route) : route.continue()),
      );

      await tab.getByRole("button", { name: "Ignore…" }).click();
      await tab.locator("input[name=ignore_reason]").fill("disk swap tonight");
      await tab.getByRole("button", { name: "Ignore", exact: true }).click();
      await expect.poll(() => tab.locator(".status").textContent(), { timeout: WAIT }).toBe("ignored");
      expect(await tab.getByRole("button", { name: "Un-ignore" }).count()).toBe(1);
      expect((await readAlert(h, auth, EXTERNAL_UID)).status).toBe("ignored");
      await expect
        .poll(() => tab.locator("li.event-ignored").textContent(), { timeout: WAIT })
        .toContain("“disk swap tonight”");

      await tab.getByRole("button", { name: "Un-ignore" }).click();
      await expect.poll(() => tab.locator(".status").textContent(), { timeout: WAIT }).toBe("active");
      expect(await tab.getByRole("button", { name: "Ignore…" }).count()).toBe(1);
      expect((await readAlert(h, auth, EXTERNAL_UID)).status).toBe("active");
      await tab.close();
    },
  );

  it("shows the attention an operator set, and its reason, in the history", STEP, async () => {
    const h = harness();
    const changed = await call(h, auth, "PATCH", `/app/sre/api/v1/alerts/${longId}`, {
      attention: "false_positive",
      attention_reason: "a probe of the pager, not an outage",
    });
    expect(changed.statusCode, changed.body).toBe(200);
    await page.goto(`${base}/alerts/${longId}`);
    const event = page.locator("li.event-triaged");
    await event.waitFor({ timeout: WAIT });
    expect(await event.locator(".att").textContent()).toBe("False positive");
    expect(await event.textContent()).toContain("“a probe of the pager, not an outage”");
  });

  it("scrolls no page sideways with a 512-character title", STEP, async () => {
    await page.goto(`${base}/alerts?integration_names=edges`);
    const title = page.locator(`a.alert-title[href="/alerts/${longId}"]`);
    await title.waitFor({ timeout: WAIT });
    expect(await title.textContent()).toContain(LONG_NAME);
    // Triage made (the start of) the title its short summary: a long word too.
    expect(await page.locator("tr.alert-row", { has: title }).locator(".clamp").textContent()).toContain(
      LONG_WORD,
    );
    expect(await sidewaysOverflow(page)).toBe(0);

    await title.click();
    await expect.poll(() => page.locator("h1").textContent(), { timeout: WAIT }).toContain(LONG_NAME);
    await page.locator("ol.timeline").waitFor({ timeout: WAIT });
    expect(await page.locator(".summary-text").textContent()).toContain(LONG_WORD);
    expect(await page.locator(".labels").textContent()).toContain(LONG_NAME);
    expect(await sidewaysOverflow(page)).toBe(0);
  });

  it("empties the integrations field when the filters are cleared", STEP, async () => {
    await page.goto(`${base}/alerts`);
    const field = page.locator("input[name=integration_names]");
    await field.fill("no-such-integration");
    await field.press("Enter");
    await page.waitForURL(/integration_names=no-such-integration/, { timeout: WAIT });
    await page.getByRole("button", { name: "Clear the filters" }).click();
    await page.waitForURL((url) => url.pathname === "/alerts" && url.search === "", { timeout: WAIT });
    await expect.poll(() => field.inputValue(), { timeout: WAIT }).toBe("");
    // Leaving the field sets nothing again.
    await field.focus();
    await field.blur();
    expect(await page.evaluate<string>("location.search")).toBe("");
    await page.locator("tr.alert-row").first().waitFor({ timeout: WAIT });
  });

  it("shows no empty state under a failed list, and leads back from a page past the end", STEP, async () => {
    for (const query of ["signal_severity=Loud", "sort_by=foo"]) {
      await page.goto(`${base}/alerts?${query}`);
      await page.locator(".error").first().waitFor({ timeout: WAIT });
      expect(await page.locator(".empty").count(), query).toBe(0);
    }

    const total = (
      (await call(harness(), auth, "GET", "/app/sre/api/v1/alerts?page_size=50")).json() as {
        total: number;
      }
    ).total;
    expect(total).toBeGreaterThan(50);
    await page.goto(`${base}/alerts?page=99`);
    const empty = page.locator(".empty");
    await empty.waitFor({ timeout: WAIT });
    expect(await empty.textContent()).toContain("Page 99 is past the end");
    expect(await empty.textContent()).not.toContain("All quiet");
    await empty.getByRole("link", { name: "the last page (2)" }).click();
    await page.waitForURL(/[?&]page=2$/, { timeout: WAIT });
    await expect.poll(() => page.locator("tr.alert-row").count(), { timeout: WAIT }).toBe(total - 50);

    await page.goto(`${base}/alerts?integration_names=edges&page=3`);
    await empty.waitFor({ timeout: WAIT });
    expect(await empty.textContent()).toContain("Page 3 is past the end");
    await empty.getByRole("link", { name: "the first page" }).click();
    await page.waitForURL((url) => url.search === "?integration_names=edges", { timeout: WAIT });
    await expect.poll(() => page.locator("tr.alert-row").count(), { timeout: WAIT }).toBe(2);
  });

  it("keeps a source's token out of the page, snippet included, until Show", STEP, async () => {
    const registrations = (await call(harness(), auth, "GET", "/app/sre/api/v1/alerts/webhook")).json() as {
      integration: string;
      trigger_url: string;
    }[];
    const url = registrations.find((registration) => registration.integration === "edges")?.trigger_url ?? "";
    const token = /apiKey=([^&]+)/.exec(url)?.[1];
    if (!token) throw new Error(`no token in ${url}`);
    await page.goto(`${base}/registrations`);
    const card = page.locator("article.registration").filter({ hasText: "/ edges" });
    await card.waitFor({ timeout: WAIT });
    expect(await page.content()).not.toContain(token);

    await card.locator("summary").click();
    const snippet = card.locator("pre.snippet");
    expect(await snippet.textContent()).toContain("apiKey=••••••••");
    expect(await page.content()).not.toContain(token);

    await card.getByRole("button", { name: "Show" }).click();
    await expect.poll(() => snippet.textContent(), { timeout: WAIT }).toContain(url);
    expect(await card.locator("code.url").textContent()).toBe(url);
  });

  it("says why it returned to sign-in when the key is revoked while signed in", STEP, async () => {
    const h = harness();
    const revoked = await h.createKey({ userName: "oncall" });
    const tab = await context.newPage();
    try {
      await signIn(tab, base, revoked.key, WAIT);
      expect(await tab.locator(".notice").count()).toBe(0);
      // The first screen's reads finish first: one still in flight would meet the revoked key
      // before the click below, and the sign-in would come back before there is a link to click.
      await tab.waitForLoadState("networkidle", { timeout: WAIT });
      await h.revokeKey(revoked.id);
      await tab.getByRole("link", { name: "Sources" }).click();
      await tab.locator("input[name=apiKey]").waitFor({ timeout: WAIT });
      await expect
        .poll(() => tab.locator(".notice").textContent(), { timeout: WAIT })
        .toContain("Your API key stopped working");
    } finally {
      await tab.close();
    }
  });

  it("says that a path answering no alert is not an alert, rather than crash", STEP, async () => {
    const crashes: string[] = [];
    const onError = (error: Error) => crashes.push(error.message);
    page.on("pageerror", onError);
    try {
      // The API answers this path with the registrations list (an array), not with an alert.
      const answered = await call(harness(), auth, "GET", "/app/sre/api/v1/alerts/webhook");
      expect(answered.statusCode).toBe(200);
      expect(Array.isArray(answered.json())).toBe(true);
      await page.goto(`${base}/alerts/webhook`);
      const empty = page.locator(".empty");
      await empty.waitFor({ timeout: WAIT });
      expect(await empty.textContent()).toContain("This alert could not be shown.");
      expect(await page.locator(".error").textContent()).toBe(
        '"webhook" is not an alert\'s id or external_uid.',
      );
      expect(await page.locator(".loading").count()).toBe(0);
      expect(crashes).toEqual([]);
    } finally {
      page.off("pageerror", onError);
    }
  });

  it(
    "scrolls neither an alert's page nor its investigation's sideways at a phone's width with a long ResourceId",
    STEP,
    async () => {
      const h = harness();
      const azure = await registerTrigger(h, auth, {
        source: "azure-monitor",
        integration: "azure",
        classify_mode: "immediate",
      });
      const [azureId = ""] = await deliverIds(
        h,
        azure,
        readFixture("azure-monitor", "log-alert-v2-fired.json"),
      );
      const started = await call(h, auth, "POST", `/app/sre/api/v1/alerts/${azureId}/investigate`);
      expect(started.statusCode, started.body).toBe(200);
      const investigationId = started.json().investigation.id as string;
      // Both done: the triage (which names the resource) and the investigation's verdict.
      await waitFor(async () => {
        const alert = await readAlert(h, auth, azureId);
        return alert.analysis_status === "completed" && alert.investigation?.status === "completed"
          ? true
          : undefined;
      }, 60_000);

      // Not a mobile emulation: its viewport may zoom out to the content and hide a sideways scroll.
      const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
      try {
        const small = await phone.newPage();
        await signIn(small, base, key, WAIT);
        expect(await small.evaluate<number>("window.innerWidth")).toBe(390);

        await small.goto(`${base}/alerts/${azureId}`);
        await small.locator("ol.timeline li").first().waitFor({ timeout: WAIT });
        // The long word is in the triage card's text, the impact card's and the labels.
        expect(await small.locator("pre.prose").first().textContent()).toContain(RESOURCE_ID);
        expect(await small.locator(".labels").textContent()).toContain(RESOURCE_ID);
        expect(await sidewaysOverflow(small)).toBe(0);

        await small.goto(`${base}/investigations/${investigationId}`);
        await expect
          .poll(() => small.locator("h2.verdict").getAttribute("data-verdict"), { timeout: WAIT })
          .not.toBe("");
        expect(await small.locator(".verdict-box").textContent()).toContain(RESOURCE_ID);
        expect(await sidewaysOverflow(small)).toBe(0);
      } finally {
        await phone.close();
      }
    },
  );

  it("registers the integration typed, even when Enter comes at once after the typing", STEP, async () => {
    const h = harness();
    const registered = async () =>
      (
        (await call(h, auth, "GET", "/app/sre/api/v1/alerts/webhook")).json() as {
          source: string;
          integration: string;
        }[]
      ).map((registration) => `${registration.source} / ${registration.integration}`);
    const before = await registered();
    await page.goto(`${base}/registrations`);
    const form = page.locator("form.inline-form");
    const field = form.locator("input[name=integration]");
    await field.waitFor({ timeout: WAIT });
    const sent = async (expected: string) => {
      // The form empties its field once the registration is made.
      await expect.poll(() => field.inputValue(), { timeout: WAIT }).toBe("");
      await expect.poll(() => form.getByRole("button", { name: "Register" }).isEnabled()).toBe(true);
      await expect.poll(registered, { timeout: WAIT }).toContain(expected);
    };

    // Typed and sent in one go, before the page has drawn the typing: what the form sends is what
    // the field holds, not what the last render saw.
    await form.locator("select").selectOption("sentry");
    await page.evaluate(`(() => {
      const field = document.querySelector("form.inline-form input[name=integration]");
      field.value = "same-task";
      field.dispatchEvent(new Event("input", { bubbles: true }));
      field.form.requestSubmit();
    })()`);
    await sent("sentry / same-task");

    // As a quick typist does it: the name, then Enter at once, several times over.
    const sources = ["grafana", "datadog", "opsgenie", "pagerduty"];
    for (let n = 0; n < 8; n++) {
      const source = sources[n % sources.length] ?? "grafana";
      await form.locator("select").selectOption(source);
      await field.fill(`race-${n}`);
      await field.press("Enter");
      await sent(`${source} / race-${n}`);
    }
    const made = (await registered()).filter((name) => !before.includes(name));
    expect(made.sort()).toEqual(
      [
        "sentry / same-task",
        ...Array.from({ length: 8 }, (_, n) => `${sources[n % sources.length]} / race-${n}`),
      ].sort(),
    );
  });

  it("starts each Ignore reason empty: a cancelled one is not kept for the next", STEP, async () => {
    const h = harness();
    const id = bulkIds[0] ?? "";
    await page.goto(`${base}/alerts/${id}`);
    await expect.poll(() => page.locator(".status").textContent(), { timeout: WAIT }).toBe("active");
    const reason = page.locator("input[name=ignore_reason]");
    const open = page.getByRole("button", { name: "Ignore…" });
    for (const leave of ["Esc", "Cancel"]) {
      await open.click();
      await reason.fill("cancel me");
      if (leave === "Esc") await reason.press("Escape");
      else await page.getByRole("button", { name: "Cancel" }).click();
      await open.click();
      expect(await reason.inputValue(), `after ${leave}`).toBe("");
      await reason.press("Escape");
    }
    // Typed as a user does, into what the field holds: the reason stored is this one alone.
    await open.click();
    await expect
      .poll(() => page.evaluate<string | null>("document.activeElement?.getAttribute('name') ?? null"))
      .toBe("ignore_reason");
    await page.keyboard.type("known maintenance until 14:00");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator(".status").textContent(), { timeout: WAIT }).toBe("ignored");
    expect((await readAlert(h, auth, id)).ignore_reason).toBe("known maintenance until 14:00");
  });

  it("sends Set attention with Enter from its select", STEP, async () => {
    const h = harness();
    const id = bulkIds[1] ?? "";
    await page.goto(`${base}/alerts/${id}`);
    await expect.poll(() => page.locator(".status").textContent(), { timeout: WAIT }).toBe("active");
    await page.getByRole("button", { name: "Set attention…" }).click();
    const select = page.locator("select[name=attention]");
    // The form opens with the focus on its select: Enter there sends it, as from its reason field.
    await expect
      .poll(() => page.evaluate<string | null>("document.activeElement?.getAttribute('name') ?? null"))
      .toBe("attention");
    await select.selectOption("false_positive");
    await select.press("Enter");
    await expect.poll(() => page.locator("form.attention-form").count(), { timeout: WAIT }).toBe(0);
    const { events } = await readHistory(h, auth, id);
    const set = events
      .filter((event) => event.kind === "triaged")
      .map((event) => (event.detail as { changes?: { attention?: string } }).changes?.attention);
    expect(set).toContain("false_positive");
  });

  it("names each screen in the tab's title", STEP, async () => {
    const titles: [string, string][] = [
      ["/alerts", "Alerts · Vigil"],
      [`/alerts/${encodeURIComponent(EXTERNAL_UID)}`, "Alert DiskFilling · Vigil"],
      ["/registrations", "Sources · Vigil"],
      ["/workflows", "Workflows · Vigil"],
      ["/agents", "Agents · Vigil"],
      ["/investigations", "Investigations · Vigil"],
      ["/sessions", "Sessions · Vigil"],
      ["/no-such-screen", "Not available · Vigil"],
    ];
    for (const [path, title] of titles) {
      await page.goto(`${base}${path}`);
      await expect.poll(() => page.title(), { timeout: WAIT }).toBe(title);
    }
  });
});
