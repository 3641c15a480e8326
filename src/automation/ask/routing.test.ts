// The routing rules without the database: words, ranking and its decisions, and input extraction.
import { describe, expect, it } from "vitest";
import { parseParts } from "../sessions/export.ts";
import { normalizePrompt } from "../sessions/session-rows.ts";
import { extractInputs } from "./extract.ts";
import { buildIndex, decide, type Routable, rank } from "./rank.ts";
import { inputsFromMessage, routeMessage } from "./route.ts";
import { editDistance, stem, terms } from "./text.ts";

const workflow = (
  name: string,
  description: string,
  examples: string[] = [],
  inputs: Routable["inputs"] = [],
) => ({ type: "workflow", name, description, examples, inputs }) as Routable;

const catalog: Routable[] = [
  workflow(
    "restart-deployment",
    "Restart a Kubernetes deployment",
    ["bounce the payments service"],
    [
      { name: "service", required: true, pattern: "^[a-z][a-z0-9-]*$" },
      { name: "cluster", required: true, pattern: "^(prod|staging)-[a-z]+$" },
    ],
  ),
  workflow("rollback-release", "Roll back a release to the previous version"),
  workflow("disk-cleanup", "Free disk space on a host"),
  workflow("disk-expand", "Expand the disk of a host"),
];

describe("words", () => {
  it("stems endings, maps operations synonyms and drops stop words and short numbers", () => {
    expect(["restarting", "restarted", "restarts", "policies"].map(stem)).toEqual([
      "restart",
      "restart",
      "restart",
      "policy",
    ]);
    expect(terms("Please bounce the API in 2 minutes")).toEqual(["restart", "api", "minute"]);
    expect(editDistance("restrat", "restart", 1)).toBe(1);
    expect(editDistance("restart", "rollback", 2)).toBe(3);
  });

  it("normalizes prompts for prior-session matching and reads export parts", () => {
    expect(normalizePrompt("  Restart   the API! ")).toBe("restart the api");
    expect(parseParts(undefined)).toEqual(["notes", "report", "evidence"]);
    expect(parseParts(" Evidence , bogus,notes")).toEqual(["notes", "evidence"]);
    expect(parseParts("bogus")).toEqual([]);
  });
});

describe("ranking", () => {
  it("ranks the candidate covering the message first, with confidence in 0..1, and tolerates a typo", () => {
    const ranked = rank(buildIndex(catalog), "restrat the checkout deployment");
    expect(ranked[0]?.candidate.name).toBe("restart-deployment");
    for (const item of ranked) expect(item.confidence).toBeGreaterThanOrEqual(0);
    for (const item of ranked) expect(item.confidence).toBeLessThanOrEqual(1);
    expect(decide(ranked).kind).toBe("routed");
  });

  it("reports two close candidates as ambiguous and a weak match as weak", () => {
    const index = buildIndex(catalog);
    const ambiguous = decide(rank(index, "disk on the host"));
    expect(ambiguous.kind).toBe("ambiguous");
    if (ambiguous.kind === "ambiguous") {
      expect(ambiguous.tied.map((item) => item.candidate.name).sort()).toEqual([
        "disk-cleanup",
        "disk-expand",
      ]);
    }
    expect(decide(rank(index, "order pizza for the whole team")).kind).toBe("weak");
    expect(routeMessage(catalog, "order pizza for the whole team", "helper").outcome).toEqual({
      kind: "fallback",
      agent: "helper",
    });
    expect(routeMessage(catalog, "order pizza for the whole team", null).outcome).toEqual({
      kind: "no_match",
    });
  });
});

describe("inputs from the message", () => {
  const restart = catalog[0] as Routable;

  it("reads key=value, key: value and quoted values", () => {
    expect(inputsFromMessage(restart, 'restart service=cart cluster: "prod-eu"')).toEqual({
      service: "cart",
      cluster: "prod-eu",
    });
  });

  it("reads a word next to the input's name, and a location after in/on/at", () => {
    expect(inputsFromMessage(restart, "restart the checkout deployment in prod-eu")).toEqual({
      service: "checkout",
      cluster: "prod-eu",
    });
    expect(inputsFromMessage(restart, "bounce service payments")).toEqual({ service: "payments" });
  });

  it("never takes the target's own words, a value against the pattern, or a word across a comma", () => {
    expect(inputsFromMessage(restart, "please restart the deployment")).toEqual({});
    expect(inputsFromMessage(restart, "restart the Checkout service in moon-base")).toEqual({});
    expect(inputsFromMessage(restart, "the checkout service, restart it")).toEqual({ service: "checkout" });
  });

  it("takes the only word matching a declared pattern, and integration names as entities", () => {
    expect(extractInputs("deploy build 4711 now", [{ name: "build", pattern: "^[0-9]{4}$" }]).values).toEqual(
      {
        build: "4711",
      },
    );
    expect(
      extractInputs("sync grafana-eu dashboards", [{ name: "integration" }], { integrations: ["grafana-eu"] })
        .values,
    ).toEqual({ integration: "grafana-eu" });
    expect(extractInputs("a 1234 b 5678", [{ name: "build", pattern: "^[0-9]{4}$" }]).values).toEqual({});
  });
});
