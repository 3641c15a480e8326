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
    poolOptions: { forks: { maxForks: 3, minForks: 1 } },
  },
});
