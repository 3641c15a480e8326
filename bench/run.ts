// `npm run bench` runs every bench; `npm run bench -- ingest` runs the named ones.
const BENCHES: Record<string, () => Promise<void>> = {
  ingest: async () => (await import("./ingest.ts")).runIngestBench(),
  query: async () => (await import("./query.ts")).runQueryBench(),
  startup: async () => (await import("./startup.ts")).runStartupBench(),
  memory: async () => (await import("./memory.ts")).runMemoryBench(),
  "console-under-load": async () => (await import("./console-under-load.ts")).runConsoleUnderLoadBench(),
  sessions: async () => (await import("./sessions.ts")).runSessionsBench(),
  "console-page": async () => (await import("./console-page.ts")).runConsolePageBench(),
  "investigations-storm": async () =>
    (await import("./investigations-storm.ts")).runInvestigationsStormBench(),
};

const requested = process.argv.slice(2).filter((arg) => arg !== "--");
const unknown = requested.filter((name) => !(name in BENCHES));
if (unknown.length > 0) {
  console.error(`unknown bench: ${unknown.join(", ")}; known: ${Object.keys(BENCHES).join(", ")}`);
  process.exit(2);
}

for (const name of requested.length > 0 ? requested : Object.keys(BENCHES)) {
  await BENCHES[name]?.();
}
// Nothing should be left running; do not wait on a stray timer if something is.
process.exit(process.exitCode ?? 0);
