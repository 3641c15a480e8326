import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "provider/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most test time waits on real peers (PostgreSQL, Prometheus, Alertmanager, Chromium, OpenTofu),
    // not on CPU: three files at a time keep two cores busy where the default (cores - 1) idles one.
    // All three forks live for the whole run: a pool that may shrink ends, on vitest 3.2, with a
    // "Terminating worker thread" rejection and files that never ran.
    poolOptions: { forks: { maxForks: 3, minForks: 3 } },
    // A fork imports Vigil's modules once, not once per test file: importing them was about a
    // seventh of the suite's time. Each file still starts its own Vigil and database.
    isolate: false,
  },
});
