// A real browser for the console's tests and bench: Debian's chromium driven by playwright-core, and
// the console built first when dist/web has no build yet (a fresh clone that skipped `npm install`).
import { execFileSync } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";

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
