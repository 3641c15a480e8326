// The console's org in its URLs, and storm rows that tell storms apart, in a real browser (Debian's
// chromium through playwright-core) against a real Vigil on loopback: a link copied inside an org
// (an alert, a filtered list) opens in that org in a fresh browser, with the switcher on it; a link
// to an org the key may not act in says so and offers the personal namespace; two storms of one
// cause in two clusters read apart by their scope, and "likely upstream" is not the cause said again.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AmAlert, amBody, deliverIds, readAlert, registerTrigger } from "../../test/alerts.ts";
import { ensureConsoleBuilt, launchChromium, openSignedIn } from "../../test/browser.ts";
import { readFixture } from "../../test/fixtures.ts";
import { type Auth, call, describeOnOneEngine, listenOnLoopback, waitFor } from "../../test/harness.ts";

const WAIT = 30_000;
const STEP = { timeout: 120_000 };
const LIST = "/app/sre/api/v1/alerts";

describeOnOneEngine("web console orgs and storms in chromium", (harness) => {
  let browser: Browser;
  let base = "";
  let org = "";
  let member = { key: "", auth: {} as Auth };
  let orgAlert = { id: "", title: "" };
  let personalTitle = "";

  /** A new browser (its own session storage), signed in with `key` at `url`. */
  const openFresh = (url: string, key: string) =>
    openSignedIn(browser, url, key, { width: 1400, height: 900 }, WAIT);
  const titles = (page: Page) => page.locator("tr.alert-row a.alert-title").allTextContents();
  const switcher = (page: Page) => page.locator("select[aria-label=Organization]");

  beforeAll(async () => {
    ensureConsoleBuilt();
    const h = harness();
    base = await listenOnLoopback(h.vigil);
    org = await h.createOrg("payments-team");
    member = await h.createKey({ userName: "payments-oncall", orgIds: [org] });
    // One alert in the org, another in the member's personal namespace: a link that loses its org
    // shows the wrong tenant's alert instead of none.
    const inOrg = await registerTrigger(
      h,
      member.auth,
      { source: "alertmanager", integration: "payments" },
      `?orgId=${org}`,
    );
    const [orgAlertId = ""] = await deliverIds(
      h,
      inOrg,
      readFixture("alertmanager", "firing-single-critical.json"),
    );
    const read = await call(h, member.auth, "GET", `${LIST}/${orgAlertId}?orgId=${org}`);
    expect(read.statusCode, read.body).toBe(200);
    orgAlert = { id: orgAlertId, title: read.json().title };
    const personal = await registerTrigger(h, member.auth, {
      source: "alertmanager",
      integration: "payments",
    });
    const [personalId = ""] = await deliverIds(
      h,
      personal,
      amBody([
        {
          status: "firing",
          fingerprint: "fp-personal",
          startsAt: new Date().toISOString(),
          summary: "Personal sandbox alert",
          labels: { alertname: "Sandbox", severity: "warning" },
        },
      ]),
    );
    personalTitle = (await readAlert(h, member.auth, personalId)).title;
    expect(personalTitle).not.toBe(orgAlert.title);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("opens a link copied inside an org in that org, in a fresh browser", STEP, async () => {
    const page = await openFresh(`${base}/alerts`, member.key);
    await expect.poll(() => titles(page), { timeout: WAIT }).toEqual([personalTitle]);
    // The personal namespace's URLs carry no org.
    expect(new URL(page.url()).searchParams.has("org")).toBe(false);

    await switcher(page).selectOption({ label: "payments-team" });
    await page.waitForURL((url) => url.searchParams.get("org") === org, { timeout: WAIT });
    await expect.poll(() => titles(page), { timeout: WAIT }).toEqual([orgAlert.title]);
    // A filter keeps the org.
    const field = page.locator("input[name=integration_names]");
    await field.fill("payments");
    await field.press("Enter");
    await page.waitForURL(
      (url) =>
        url.searchParams.get("integration_names") === "payments" && url.searchParams.get("org") === org,
      { timeout: WAIT },
    );
    await expect.poll(() => titles(page), { timeout: WAIT }).toEqual([orgAlert.title]);
    const listUrl = page.url();
    // So does the link to the alert, as the page shows it and once followed.
    const link = page.locator("tr.alert-row a.alert-title");
    expect(new URL(`${base}${await link.getAttribute("href")}`).searchParams.get("org")).toBe(org);
    await link.click();
    await page.waitForURL(
      (url) => url.pathname === `/alerts/${orgAlert.id}` && url.searchParams.get("org") === org,
      { timeout: WAIT },
    );
    await expect.poll(() => page.locator("h1").textContent(), { timeout: WAIT }).toBe(orgAlert.title);
    const alertUrl = page.url();
    await page.context().close();

    // A fresh browser, the same key: the alert, in the org.
    const fresh = await openFresh(alertUrl, member.key);
    await expect.poll(() => fresh.locator("h1").textContent(), { timeout: WAIT }).toBe(orgAlert.title);
    expect(await switcher(fresh).inputValue()).toBe(org);
    expect(await fresh.locator(".error").count()).toBe(0);
    await fresh.context().close();

    // And the filtered list, in the org: not the personal namespace's alerts.
    const freshList = await openFresh(listUrl, member.key);
    await expect.poll(() => titles(freshList), { timeout: WAIT }).toEqual([orgAlert.title]);
    expect(await switcher(freshList).inputValue()).toBe(org);
    expect(await freshList.locator("input[name=integration_names]").inputValue()).toBe("payments");

    // Switching to Personal takes the org out of the URL and shows the personal alerts; Back returns.
    await switcher(freshList).selectOption({ label: "Personal" });
    await freshList.waitForURL((url) => !url.searchParams.has("org"), { timeout: WAIT });
    await expect.poll(() => titles(freshList), { timeout: WAIT }).toEqual([personalTitle]);
    await freshList.goBack();
    await freshList.waitForURL((url) => url.searchParams.get("org") === org, { timeout: WAIT });
    await expect.poll(() => titles(freshList), { timeout: WAIT }).toEqual([orgAlert.title]);
    expect(await switcher(freshList).inputValue()).toBe(org);
    await freshList.context().close();
  });

  it("says a link's org is not one the key may act in, and offers the personal namespace", STEP, async () => {
    const outsider = await harness().createKey({ userName: "outsider" });
    const page = await openFresh(`${base}/alerts/${orgAlert.id}?org=${org}`, outsider.key);
    const refused = page.locator(".empty");
    await expect
      .poll(() => refused.locator("strong").textContent(), { timeout: WAIT })
      .toBe(`This link is for the organization ${org}, which this key may not act in.`);
    await refused.getByRole("button", { name: "Open it in your personal namespace" }).click();
    await page.waitForURL((url) => url.pathname === `/alerts/${orgAlert.id}` && url.search === "", {
      timeout: WAIT,
    });
    // The personal namespace has no such alert: the page says so, as for any unknown id.
    await expect.poll(() => page.locator(".error, .empty").count(), { timeout: WAIT }).toBeGreaterThan(0);
    await page.context().close();
  });

  it(
    "tells apart storms of one cause in two clusters, and names no upstream that is the cause",
    STEP,
    async () => {
      const h = harness();
      const { key, auth } = await h.createKey({ userName: "storms" });
      const nodes = await registerTrigger(h, auth, { source: "alertmanager", integration: "nodes" });
      // The disk pressure fires a minute before the errors: it is the cause, they its symptoms.
      const now = Date.now();
      const clusters = ["prod-eu", "prod-us"];
      const ids = await deliverIds(
        h,
        nodes,
        amBody(
          clusters.flatMap((cluster): AmAlert[] => [
            {
              status: "firing",
              fingerprint: `disk-${cluster}`,
              startsAt: new Date(now - 60_000).toISOString(),
              summary: "NodeDiskPressure",
              labels: { alertname: "NodeDiskPressure", cluster, node: "node-1", severity: "critical" },
            },
            {
              status: "firing",
              fingerprint: `errors-${cluster}`,
              startsAt: new Date(now).toISOString(),
              summary: "Checkout errors",
              labels: { alertname: "CheckoutErrors", cluster, namespace: "checkout", severity: "warning" },
            },
          ]),
        ),
      );
      // Two storms, each a cause and its symptom.
      let state = "";
      await waitFor(async () => {
        const alerts = await Promise.all(ids.map((id) => readAlert(h, auth, id)));
        state = JSON.stringify(alerts.map((a) => [a.title, a.storm_id, a.alert_role, a.likely_upstream]));
        const storms = new Set(alerts.map((a) => a.storm_id));
        return alerts.every((a) => a.storm_id) &&
          storms.size === 2 &&
          alerts.every((a) => a.alert_role !== "unknown")
          ? true
          : undefined;
      }, 60_000).catch((err) => {
        throw new Error(`${err.message}: ${state}`);
      });

      const page = await openFresh(`${base}/alerts`, key);
      const heads = page.locator("tr.storm-head");
      await expect.poll(() => heads.count(), { timeout: WAIT }).toBe(2);
      const said = (await heads.allTextContents()).map((text) => text.replace(/\s+/g, " ").trim());
      expect(said.map((text) => /cluster=(prod-\w+)/.exec(text)?.[1]).sort()).toEqual(clusters);
      for (const text of said) {
        expect(text).toContain("cause: NodeDiskPressure");
        expect(text).not.toContain("likely upstream");
      }
      expect(new Set(said).size).toBe(2);
      await page.context().close();
    },
  );
});
