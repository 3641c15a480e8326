// The alert console when what is on screen is not (yet) the answer, in a real browser (Debian's
// chromium through playwright-core) against a real Vigil on loopback: the previous filter's rows
// while the new filter's answer is on its way, and the last list read before Vigil stopped answering,
// are marked stale (dimmed, aria-busy, the keys do not act on them) and say why; a search whose count
// stopped at its limit leads back from past its end to the page Next came from; blank integration
// names and an out-of-range page_size or page from the URL never reach the API; the pager counts one
// alert in the singular; labels are plain, copyable text (no label filter exists); an analyst's
// attention marks what the classifier said as superseded; Esc leaves the search field without making
// it disagree with the search in force, and the sessions' search field follows the URL; j and k move
// while the focus is on the Live box.
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../test/alerts.ts";
import { ensureConsoleBuilt, launchChromium, signIn } from "../../test/browser.ts";
import { type Auth, call, describeOnOneEngine, listenOnLoopback, waitFor } from "../../test/harness.ts";

const WAIT = 30_000;
const STEP = { timeout: 120_000 };
const LIST = "/app/sre/api/v1/alerts";
/** Alerts whose title has "disk": more than the search count limit (4, below). */
const DISKS = 6;

describeOnOneEngine(
  "web console list states in chromium",
  (harness) => {
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let base = "";
    let key = "";
    let auth: Auth;
    let soloId = "";

    const rows = () => page.locator("tr.alert-row");
    const list = () => page.locator(".alert-list");
    /** Lets the page handle what it was just sent and render: a frame, then the tasks queued by it. */
    const settled = () =>
      page.evaluate("new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))");
    const selectedHref = () =>
      page.locator("tr.alert-row.selected a.alert-title").getAttribute("href", { timeout: WAIT });

    beforeAll(async () => {
      ensureConsoleBuilt();
      const h = harness();
      base = await listenOnLoopback(h.vigil);
      ({ key, auth } = await h.createKey({ userName: "oncall" }));
      const startsAt = new Date().toISOString();
      // One namespace each: no storm gathers them.
      const disks = await registerTrigger(h, auth, { source: "alertmanager", integration: "disks" });
      await deliverIds(
        h,
        disks,
        amBody(
          Array.from({ length: DISKS }, (_, index) => ({
            status: "firing" as const,
            fingerprint: `fp-disk-${index}`,
            startsAt,
            summary: `Disk filling on node-${index}`,
            labels: { alertname: "DiskFilling", namespace: `disk-${index}`, severity: "warning" },
          })),
        ),
      );
      const solo = await registerTrigger(h, auth, {
        source: "alertmanager",
        integration: "solo",
        classify_mode: "immediate",
      });
      [soloId = ""] = await deliverIds(
        h,
        solo,
        amBody([
          {
            status: "firing",
            fingerprint: "fp-solo",
            startsAt,
            summary: "Checkout latency high",
            labels: {
              alertname: "CheckoutLatency",
              namespace: "checkout",
              env: "production",
              severity: "critical",
            },
          },
        ]),
      );
      await waitFor(async () => {
        const alert = await readAlert(h, auth, soloId);
        return alert.analysis_status === "completed" ? true : undefined;
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
      "shows labels as plain text, each with a copy button, not as a search that finds nothing",
      STEP,
      async () => {
        await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
        await page.goto(`${base}/alerts/${soloId}`);
        const labels = page.locator(".labels");
        await labels.waitFor({ timeout: WAIT });
        expect(await labels.textContent()).toContain("env=production");
        // No link: q searches titles and descriptions only, so a label's value would find nothing.
        expect(await labels.locator("a").count()).toBe(0);
        expect(await page.locator('a[href*="q=production"]').count()).toBe(0);
        await page.getByRole("button", { name: "Copy env=production" }).click();
        await expect
          .poll(() => page.evaluate<string>("navigator.clipboard.readText()"), { timeout: WAIT })
          .toBe("env=production");
      },
    );

    it(
      "marks the previous filter's rows stale, and keeps j, k and Enter off them, until the new answer",
      STEP,
      async () => {
        await page.goto(`${base}/alerts`);
        await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(DISKS + 1);
        await expect.poll(selectedHref, { timeout: WAIT }).not.toBeNull();
        const firstHref = await selectedHref();
        // The new filter's list is held unanswered: a slow network.
        const held: Route[] = [];
        const slow = (url: URL) =>
          url.pathname === LIST && url.searchParams.get("integration_names") === "solo";
        await page.route(slow, (route) => {
          held.push(route);
        });
        try {
          const field = page.locator("input[name=integration_names]");
          await field.fill("solo");
          await field.press("Enter");
          await page.waitForURL(/integration_names=solo/, { timeout: WAIT });
          await expect.poll(() => held.length, { timeout: WAIT }).toBeGreaterThan(0);

          // The old rows are still there, but marked as not the answer.
          expect(await rows().count()).toBe(DISKS + 1);
          expect(await page.locator(".alert-list.stale").count()).toBe(1);
          expect(await page.locator('.alert-list[aria-busy="true"]').count()).toBe(1);
          expect(
            Number(
              await page.evaluate<string>(`getComputedStyle(document.querySelector(".alert-list")).opacity`),
            ),
          ).toBeLessThan(1);
          expect(await page.locator(".summary .stale-note").textContent()).toBe("Loading…");

          // Keys do nothing on them: the selection stays, Enter opens nothing.
          await page.evaluate("document.activeElement?.blur()");
          await page.keyboard.press("j");
          await page.keyboard.press("j");
          await page.keyboard.press("Enter");
          await settled();
          expect(new URL(page.url()).pathname).toBe("/alerts");
          expect(await selectedHref()).toBe(firstHref);
        } finally {
          // Answered at last (also when a check above failed, so the next test meets a plain page).
          for (const route of held.splice(0)) await route.continue().catch(() => {});
          await page.unroute(slow);
        }
        await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(1);
        await expect.poll(() => list().getAttribute("aria-busy"), { timeout: WAIT }).toBe("false");
        expect(await page.locator(".alert-list.stale").count()).toBe(0);
        expect(await page.locator(".stale-note").count()).toBe(0);
        // The fresh rows act on the keys again.
        await page.keyboard.press("Enter");
        await page.waitForURL(new RegExp(`/alerts/${soloId}$`), { timeout: WAIT });
      },
    );

    it(
      "says Vigil is not reachable, marks the list stale, and recovers when it answers again",
      STEP,
      async () => {
        await page.goto(`${base}/alerts?integration_names=disks`);
        await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(DISKS);
        // Every list request fails as when the server is down; the live refresh meets it.
        const down = (url: URL) => url.pathname === LIST;
        await page.route(down, (route) => route.abort("connectionrefused"));
        const banner = page.locator(".unreachable");
        try {
          await banner.waitFor({ timeout: WAIT });
          const said = (await banner.textContent()) ?? "";
          expect(said).toMatch(/^Vigil is not reachable: showing the list as of \d\d:\d\d:\d\d\./);
          expect(said).not.toContain("Failed to fetch");
          expect(await page.locator(".error").filter({ hasText: "Failed to fetch" }).count()).toBe(0);
          expect(await rows().count()).toBe(DISKS);
          expect(await page.locator(".alert-list.stale").count()).toBe(1);
          const firstHref = await selectedHref();
          await page.keyboard.press("j");
          await settled();
          expect(await selectedHref()).toBe(firstHref);
        } finally {
          await page.unroute(down);
        }
        await banner.waitFor({ state: "detached", timeout: WAIT });
        expect(await page.locator(".alert-list.stale").count()).toBe(0);
        expect(await rows().count()).toBe(DISKS);
      },
    );

    it(
      "leads back from past the end of a capped count to the page Next came from, not to the capped one",
      STEP,
      async () => {
        const counted = (
          await call(harness(), auth, "GET", `${LIST}?q=disk&page_size=1&page=${DISKS}`)
        ).json();
        expect(counted).toMatchObject({ total_exact: false, total: DISKS });
        await page.goto(`${base}/alerts?q=disk&page_size=1&page=${DISKS}`);
        const pager = page.locator(".pager span");
        await expect
          .poll(() => pager.textContent(), { timeout: WAIT })
          .toBe(`Page ${DISKS} of ${DISKS}+ · ${DISKS}+ alerts`);
        // Full page, count not exact: there may be more.
        await page.getByRole("button", { name: "Next →" }).click();
        await page.waitForURL(new RegExp(`page=${DISKS + 1}$`), { timeout: WAIT });
        const empty = page.locator(".empty");
        await expect
          .poll(() => empty.textContent(), { timeout: WAIT })
          .toBe(
            `Page ${DISKS + 1} is past the end of this list.4+ alerts match: go back to page ${DISKS} or the first page.`,
          );
        await empty.getByRole("link", { name: `page ${DISKS}` }).click();
        await page.waitForURL(new RegExp(`page=${DISKS}$`), { timeout: WAIT });
        await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(1);

        // A short page is the last: Next is off.
        await page.goto(`${base}/alerts?q=disk&page_size=4&page=2`);
        await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(DISKS - 4);
        expect(await page.getByRole("button", { name: "Next →" }).isDisabled()).toBe(true);
      },
    );

    it("drops blank integration names, keeps page_size within 1 to 500 and page from 1", STEP, async () => {
      const sent: string[] = [];
      const record = (request: { url(): string }) => {
        const url = new URL(request.url());
        if (url.pathname === LIST) sent.push(url.search);
      };
      page.on("request", record);
      try {
        await page.goto(`${base}/alerts`);
        await rows().first().waitFor({ timeout: WAIT });
        const field = page.locator("input[name=integration_names]");
        await field.fill("disks, ,");
        await field.press("Enter");
        await page.waitForURL((url) => url.searchParams.get("integration_names") === "disks", {
          timeout: WAIT,
        });
        await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(DISKS);
        expect(await page.locator(".error").count()).toBe(0);

        // A link with blanks in it (typed, or from before this fix) lists as well.
        for (const names of ["disks,", " ,disks", "disks,,solo, "]) {
          await page.goto(`${base}/alerts?integration_names=${encodeURIComponent(names)}`);
          await expect
            .poll(() => rows().count(), { timeout: WAIT })
            .toBe(names.includes("solo") ? DISKS + 1 : DISKS);
          expect(await page.locator(".error").count(), names).toBe(0);
        }
        await page.goto(`${base}/alerts?integration_names=${encodeURIComponent(" , ")}`);
        await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(DISKS + 1);
        expect(await page.locator(".error").count()).toBe(0);

        await page.goto(`${base}/alerts?integration_names=disks&page_size=501`);
        await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(DISKS);
        expect(await page.locator(".error").count()).toBe(0);
        await page.goto(`${base}/alerts?integration_names=disks&page_size=-2`);
        await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(1);
        expect(await page.locator(".error").count()).toBe(0);
        // 0 is outside too, and brought to the nearer bound as -2 is: 1, not the default.
        await page.goto(`${base}/alerts?integration_names=disks&page_size=0`);
        await expect
          .poll(() => page.locator(".pager span").textContent(), { timeout: WAIT })
          .toBe(`Page 1 of ${DISKS} · ${DISKS} alerts`);
        expect(await rows().count()).toBe(1);
        // A page below the first is the first, as page=0 is, not the API's 400.
        for (const pageNumber of ["-1", "0"]) {
          await page.goto(`${base}/alerts?integration_names=disks&page=${pageNumber}`);
          await expect
            .poll(() => page.locator(".pager span").textContent(), { timeout: WAIT })
            .toBe(`Page 1 of 1 · ${DISKS} alerts`);
          expect(await page.locator(".error").count(), `page=${pageNumber}`).toBe(0);
        }

        const bad = sent.filter((search) => {
          const query = new URLSearchParams(search);
          const names = query.get("integration_names");
          const size = Number(query.get("page_size"));
          const at = Number(query.get("page"));
          return names?.split(",").some((name) => name.trim() === "") || size < 1 || size > 500 || at < 1;
        });
        expect(bad).toEqual([]);
      } finally {
        page.off("request", record);
      }
    });

    it("counts one alert in the singular", STEP, async () => {
      await page.goto(`${base}/alerts?integration_names=solo`);
      await expect
        .poll(() => page.locator(".pager span").textContent(), { timeout: WAIT })
        .toBe("Page 1 of 1 · 1 alert");
    });

    it("marks what the classifier said as superseded once an analyst sets the attention", STEP, async () => {
      const before = await readAlert(harness(), auth, soloId);
      expect(before.short_summary).toBeTruthy();
      await page.goto(`${base}/alerts/${soloId}`);
      await page.locator("ol.timeline li").first().waitFor({ timeout: WAIT });
      expect(await page.locator(".superseded").count()).toBe(0);
      expect(await page.locator(".summary-text").textContent()).toBe(before.short_summary);

      const attention = before.attention === "false_positive" ? "needs_attention" : "false_positive";
      await page.getByRole("button", { name: "Set attention…" }).click();
      await page.locator("select[name=attention]").selectOption(attention);
      await page.locator("input[name=attention_reason]").fill("the probe, not checkout");
      await page.getByRole("button", { name: "Save" }).click();
      const superseded = page.locator(".superseded");
      await superseded.waitFor({ timeout: WAIT });
      expect(await superseded.textContent()).toContain("Classifier said");
      expect(await superseded.locator(".att").textContent()).toBe(
        {
          needs_attention: "Needs attention",
          needs_review: "Needs review",
          false_positive: "False positive",
          others: "Others",
        }[before.attention as string],
      );
      expect(await superseded.locator(".summary-text").textContent()).toBe(before.short_summary);
      expect(await page.locator(".attention-reason-text").textContent()).toBe("the probe, not checkout");
      // The analyst's reason is the current one, outside the superseded part.
      expect(await superseded.textContent()).not.toContain("the probe, not checkout");
    });

    it("keeps the search field showing the search in force when Esc leaves it", STEP, async () => {
      await page.goto(`${base}/alerts`);
      await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(DISKS + 1);
      const field = page.locator("input[name=q]");
      const applied = () => new URL(page.url()).searchParams.get("q") ?? "";
      const inField = () => page.evaluate<boolean>("document.activeElement?.name === 'q'");
      await page.evaluate("document.activeElement?.blur()");
      await page.keyboard.press("/");
      await expect.poll(inField, { timeout: WAIT }).toBe(true);
      await page.keyboard.type("checkout");
      await page.keyboard.press("Enter");
      await page.waitForURL((url) => url.searchParams.get("q") === "checkout", { timeout: WAIT });
      await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(1);

      // Esc leaves the field and keeps its text: an empty box over a filtered list would lie.
      await page.keyboard.press("Escape");
      await settled();
      expect(await inField()).toBe(false);
      expect(await field.inputValue()).toBe("checkout");
      // A search typed and not sent is dropped: the field shows the search in force again.
      await page.keyboard.press("/");
      await expect.poll(inField, { timeout: WAIT }).toBe(true);
      await page.keyboard.type("latency");
      expect(await field.inputValue()).not.toBe("checkout");
      await page.keyboard.press("Escape");
      await settled();
      expect(await field.inputValue()).toBe("checkout");
      expect(applied()).toBe("checkout");

      // Sent again, it sends what it shows.
      await page.keyboard.press("/");
      await expect.poll(inField, { timeout: WAIT }).toBe(true);
      await page.keyboard.press("Enter");
      await settled();
      expect(applied()).toBe("checkout");
      expect(await field.inputValue()).toBe("checkout");
      await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(1);

      // The sessions' search does the same.
      await page.goto(`${base}/sessions?q=deploy`);
      const sessionsField = page.locator("input[name=q]");
      await expect.poll(() => sessionsField.inputValue(), { timeout: WAIT }).toBe("deploy");
      await sessionsField.focus();
      await page.keyboard.type(" more");
      await page.keyboard.press("Escape");
      await settled();
      expect(await sessionsField.inputValue()).toBe("deploy");
      expect(await page.evaluate<boolean>("document.activeElement?.name === 'q'")).toBe(false);
      expect(new URL(page.url()).searchParams.get("q")).toBe("deploy");
    });

    it(
      "empties the sessions' search field when Back or the Sessions link leaves the search",
      STEP,
      async () => {
        await page.goto(`${base}/sessions`);
        const field = page.locator("input[name=q]");
        await field.waitFor({ timeout: WAIT });
        const search = async () => {
          await field.fill("checkout");
          await field.press("Enter");
          await page.waitForURL((url) => url.searchParams.get("q") === "checkout", { timeout: WAIT });
        };
        const unsearched = (url: URL) => url.pathname === "/sessions" && !url.searchParams.has("q");

        await search();
        await page.goBack();
        await page.waitForURL(unsearched, { timeout: WAIT });
        await expect.poll(() => field.inputValue(), { timeout: WAIT }).toBe("");

        await search();
        await page.locator("header.top nav").getByRole("link", { name: "Sessions" }).click();
        await page.waitForURL(unsearched, { timeout: WAIT });
        await expect.poll(() => field.inputValue(), { timeout: WAIT }).toBe("");

        // Back returns to the search, and the field with it.
        await page.goBack();
        await page.waitForURL((url) => url.searchParams.get("q") === "checkout", { timeout: WAIT });
        await expect.poll(() => field.inputValue(), { timeout: WAIT }).toBe("checkout");
      },
    );

    it("moves with j and k while the focus is on the Live box", STEP, async () => {
      await page.goto(`${base}/alerts?integration_names=disks`);
      await expect.poll(() => rows().count(), { timeout: WAIT }).toBe(DISKS);
      await expect.poll(selectedHref, { timeout: WAIT }).not.toBeNull();
      const [first, second] = await rows()
        .locator("a.alert-title")
        .evaluateAll((links) => links.slice(0, 2).map((link) => link.getAttribute("href")));
      expect(await selectedHref()).toBe(first);
      const live = page.locator(".live input[type=checkbox]");
      await live.focus();
      // A checkbox takes no typing: the list's keys are the list's.
      await page.keyboard.press("j");
      await expect.poll(selectedHref, { timeout: WAIT }).toBe(second);
      await page.keyboard.press("k");
      await expect.poll(selectedHref, { timeout: WAIT }).toBe(first);
      expect(await page.evaluate<string | null>("document.activeElement?.type ?? null")).toBe("checkbox");
      expect(await live.isChecked()).toBe(true);
    });
  },
  // A small search count limit, so that a search's total is a lower bound ("4+").
  { searchCountLimit: 4 },
);
