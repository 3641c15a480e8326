// A real browser for the console's tests and bench: Debian's chromium driven by playwright-core, and
// the console built first when dist/web has no build yet (a fresh clone that skipped `npm install`).
import { execFileSync } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Headless, and quiet: no sandbox (CI runs as root), no GPU, no calls home. */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export function ensureConsoleBuilt(): void {
  if (existsSync(join(REPO, "dist", "web", "index.html"))) return;
  execFileSync("npm", ["run", "build:web"], { cwd: REPO, stdio: "inherit", timeout: 300_000 });
}

export async function launchChromium(): Promise<Browser> {
  try {
    accessSync(CHROMIUM, constants.X_OK);
  } catch {
    throw new Error(`${CHROMIUM} not found: install Debian's chromium package (apt-get install chromium)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** Where the console's screenshots go (git-ignored). */
export const ARTIFACTS = join(REPO, "test-artifacts", "console");

/** Signs in at `base` with `key` and waits for the console's header (up to `timeoutMs`). */
export async function signIn(page: Page, base: string, key: string, timeoutMs = 30_000): Promise<void> {
  await page.goto(`${base}/alerts`);
  await submitKey(page, key, timeoutMs);
}

/** A new browser context (its own session storage) at `url`, signed in there with `key`. */
export async function openSignedIn(
  browser: Browser,
  url: string,
  key: string,
  viewport = { width: 1280, height: 900 },
  timeoutMs = 30_000,
): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await openAndSignIn(page, url, key, timeoutMs);
  return page;
}

/** Opens `url` in `page` and signs in there with `key`, as a link opened in a new tab is. */
export async function openAndSignIn(page: Page, url: string, key: string, timeoutMs = 30_000): Promise<void> {
  await page.goto(url);
  await submitKey(page, key, timeoutMs);
}

/** Fills the sign-in screen with `key` and waits for the console's header. */
async function submitKey(page: Page, key: string, timeoutMs: number): Promise<void> {
  await page.locator("input[name=apiKey]").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("header.top").waitFor({ timeout: timeoutMs });
}

/** How far the page itself scrolls sideways (0 when everything fits; a table may scroll in its own box). */
export const sidewaysOverflow = (page: Page) =>
  page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");

/**
 * Text whose contrast with what is behind it is under WCAG AA (4.5:1, 3:1 for large text), as the
 * page renders it: colours from computed styles, backgrounds composed from the root down, opacity
 * applied. Disabled controls are exempt, as WCAG has it; the trace graph (SVG) is not text here.
 */
const LOW_CONTRAST = `(() => {
  const parse = (value) => {
    let m = /^rgba?\\((.+)\\)$/.exec(value);
    if (m) {
      const p = m[1].split(/[\\s,/]+/).filter(Boolean).map(parseFloat);
      return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
    }
    m = /^color\\(srgb (.+)\\)$/.exec(value);
    if (m) {
      const p = m[1].split(/[\\s/]+/).filter(Boolean).map(parseFloat);
      return [p[0] * 255, p[1] * 255, p[2] * 255, p.length > 3 ? p[3] : 1];
    }
    return null;
  };
  const over = (top, below) => [0, 1, 2].map((i) => top[i] * top[3] + below[i] * (1 - top[3])).concat(1);
  const luminance = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const failures = [];
  for (const el of document.body.querySelectorAll("*")) {
    if (el.closest("svg, option, .sr-only, :disabled, script, style")) continue;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== "");
    const field = ["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName) && el.value;
    if (!own && !field) continue;
    const rect = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (rect.width <= 1 || rect.height <= 1 || style.visibility !== "visible") continue;
    const chain = [];
    for (let at = el; at; at = at.parentElement) chain.unshift(at);
    let background = [255, 255, 255, 1];
    let opacity = 1;
    let unreadable = "";
    for (const at of chain) {
      const s = getComputedStyle(at);
      const layer = parse(s.backgroundColor);
      if (!layer) unreadable = s.backgroundColor;
      else background = over(layer, background);
      opacity *= parseFloat(s.opacity);
    }
    const color = parse(style.color);
    if (!color || unreadable) {
      failures.push(el.tagName + ": unreadable colour " + (unreadable || style.color));
      continue;
    }
    const text = over([color[0], color[1], color[2], color[3] * opacity], background);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && parseInt(style.fontWeight, 10) >= 700);
    const measured = ratio(text, background);
    if (measured < (large ? 3 : 4.5)) {
      const label = (el.textContent || el.value || "").trim().slice(0, 40);
      failures.push(el.tagName.toLowerCase() + "." + [...el.classList].join(".") + ' "' + label + '" ' +
        measured.toFixed(2) + ":1 (" + style.color + " on rgb(" + background.slice(0, 3).map(Math.round).join(",") + "))");
    }
  }
  return failures;
})()`;

export const lowContrastText = (page: Page) => page.evaluate<string[]>(LOW_CONTRAST);

/** The controls a keyboard user must be able to reach: visible, enabled, in document order. */
const MARK_CONTROLS = `(() => {
  const controls = [...document.querySelectorAll(
    "a[href], button, input:not([type=hidden]), select, textarea, summary",
  )].filter((el) => !el.disabled && el.getClientRects().length > 0 && !el.closest("[inert]"));
  controls.forEach((el, index) => el.setAttribute("data-control", String(index)));
  document.body.setAttribute("tabindex", "-1");
  document.body.focus();
  document.body.removeAttribute("tabindex");
  return controls.map((el) => (el.getAttribute("aria-label") || el.textContent || el.name || el.tagName).trim().slice(0, 40));
})()`;

const FOCUSED = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  const ring = (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0) || style.boxShadow !== "none";
  return { control: el.getAttribute("data-control"), ring, label: (el.getAttribute("aria-label") || el.textContent || el.tagName).trim().slice(0, 40) };
})()`;

/**
 * Presses Tab through the whole page once. Answers the controls Tab never reached and the stops
 * that showed no focus ring: both empty on a page a keyboard user can work.
 */
export async function tabThrough(page: Page): Promise<{ unreached: string[]; withoutRing: string[] }> {
  const controls = await page.evaluate<string[]>(MARK_CONTROLS);
  const reached = new Set<string>();
  const withoutRing: string[] = [];
  for (let press = 0; press < controls.length + 20; press++) {
    await page.keyboard.press("Tab");
    const focused = await page.evaluate<{ control: string | null; ring: boolean; label: string } | null>(
      FOCUSED,
    );
    if (!focused) break;
    if (focused.control !== null && reached.has(focused.control)) break;
    if (focused.control !== null) reached.add(focused.control);
    if (!focused.ring) withoutRing.push(focused.label);
  }
  // A page with no controls at all is not what a test of one means to check.
  if (controls.length === 0) throw new Error("the page has no controls to reach");
  return { unreached: controls.filter((_, index) => !reached.has(String(index))), withoutRing };
}
