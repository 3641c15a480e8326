// The layering rule of CONTRIBUTING.md, checked by `npm test` (`npm run check`).
// Layers, lowest first; a module may import its own layer's plumbing and anything below it:
//   core (and config.ts)  <-  llm, integrations, webhooks  <-  alerts, automation  <-  investigations
//   <-  apps  <-  mcp  <-  web  <-  app.ts, jobs.ts, start.ts, main.ts
// Between domains, only a domain's index.ts may be imported.
const DOMAINS = [
  "llm",
  "integrations",
  "webhooks",
  "alerts",
  "automation",
  "investigations",
  "apps",
  "mcp",
  "web",
];
const LAYERS = [
  ["core"],
  ["llm", "integrations", "webhooks"],
  ["alerts", "automation"],
  ["investigations"],
  ["apps"],
  ["mcp"],
  ["web"],
];
const TOP = "^src/(app|jobs|start|main)\\.ts$";
const folder = (names) => `^src/(${names.join("|")})/`;

// A layer may not reach into a higher one, nor into a peer domain of its own layer.
const upward = LAYERS.flatMap((layer, index) => {
  const higher = LAYERS.slice(index + 1).flat();
  const rules = [];
  if (higher.length > 0) {
    rules.push({
      name: `${layer.join("-")}-not-above`,
      comment: `${layer.join(", ")} must not import a higher layer (${higher.join(", ")}) or the top files`,
      severity: "error",
      from: { path: folder(layer) },
      to: { path: [folder(higher), TOP] },
    });
  } else {
    rules.push({
      name: `${layer.join("-")}-not-top`,
      severity: "error",
      from: { path: folder(layer) },
      to: { path: TOP },
    });
  }
  for (const domain of layer) {
    const peers = layer.filter((other) => other !== domain);
    if (peers.length === 0) continue;
    rules.push({
      name: `${domain}-not-peers`,
      comment: `${domain} must not import its peers (${peers.join(", ")}); a port wired in app.ts connects them`,
      severity: "error",
      from: { path: `^src/${domain}/` },
      to: { path: folder(peers) },
    });
  }
  return rules;
});

module.exports = {
  forbidden: [
    ...upward,
    {
      name: "config-is-plumbing",
      comment: "config.ts is read by everything and imports no domain",
      severity: "error",
      from: { path: "^src/config\\.ts$" },
      to: { path: [folder(DOMAINS), TOP] },
    },
    {
      name: "domain-through-index",
      comment: "another domain is reached only through its index.ts",
      severity: "error",
      from: { path: "^src/([^/]+)/", pathNot: "\\.test\\.ts$" },
      to: {
        path: folder(DOMAINS),
        pathNot: ["^src/$1/", `${folder(DOMAINS)}index\\.ts$`],
      },
    },
    {
      name: "top-through-index",
      comment: "app.ts, jobs.ts, start.ts and main.ts reach domains only through their index.ts",
      severity: "error",
      from: { path: TOP },
      to: { path: folder(DOMAINS), pathNot: `${folder(DOMAINS)}index\\.ts$` },
    },
    {
      name: "no-test-code-in-src",
      comment: "product code never imports test helpers or the test runner",
      severity: "error",
      from: { path: "^src/", pathNot: "\\.test\\.ts$" },
      to: { path: ["^test/", "\\.test\\.ts$", "^node_modules/(vitest|@vitest|fast-check)/"] },
    },
    {
      name: "no-circular",
      severity: "error",
      from: {},
      to: { circular: true, dependencyTypesNot: ["type-only"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default"],
    },
  },
};
