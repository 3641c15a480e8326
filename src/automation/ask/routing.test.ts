// The routing rules without the database: words, ranking and its decisions, and input extraction.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseParts } from "../sessions/export.ts";
import { normalizePrompt } from "../sessions/session-rows.ts";
import { extractInputs } from "./extract.ts";
import { buildIndex, decide, type Routable, rank } from "./rank.ts";
import { inputsFromMessage, routeMessage } from "./route.ts";
import { actionVerbs, asksQuestion, editDistance, stem, terms } from "./text.ts";

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

describe("questions and the values of an example", () => {
  // As an SRE sets it up: one workflow that changes production, its examples naming real services.
  const restart = workflow(
    "restart-deployment",
    "Restart a Kubernetes deployment",
    ["restart the checkout deployment in prod-eu", "bounce the search service"],
    [
      { name: "service", required: true, pattern: "^[a-z][a-z0-9-]*$" },
      { name: "cluster", required: true, pattern: "^(prod|staging)-[a-z]+$" },
    ],
  );
  const outcomeOf = (message: string, candidates = [restart]) =>
    routeMessage(candidates, message, null).outcome.kind;

  it("tells a question from a request, and reads the verbs that change something", () => {
    for (const question of [
      "what is the error rate of the checkout service in prod-eu?",
      "who owns the checkout deployment in prod-eu",
      "Which pods restarted",
      "how many replicas does checkout have",
      "why is checkout slow",
      "when did search last deploy",
      "where does checkout run",
      "is checkout down",
      "Are the payments pods healthy",
      "does search have an on-call",
      "can you restart checkout in prod-eu",
      "hey, what\u2019s wrong with checkout",
      "checkout in prod-eu is slow?",
    ]) {
      expect(asksQuestion(question), question).toBe(true);
    }
    for (const request of [
      "restart checkout in prod-eu",
      "do a failover of database accounts",
      "bounce the search service, it is stuck",
      "the checkout deployment in prod-eu is down",
    ]) {
      expect(asksQuestion(request), request).toBe(false);
    }
    expect([...actionVerbs("Bounce checkout, then roll back search and check the disk")].sort()).toEqual([
      "restart",
      "rollback",
    ]);
    expect([...actionVerbs("investigate the latency of checkout")]).toEqual([]);
  });

  it("starts nothing for a question that does not name the workflow's action", () => {
    expect(outcomeOf("what is the error rate of the checkout service in prod-eu?")).toBe("no_match");
    expect(outcomeOf("who owns the checkout deployment in prod-eu")).toBe("no_match");
    expect(outcomeOf("is the checkout deployment in prod-eu healthy?")).toBe("no_match");
    expect(routeMessage([restart], "who owns the checkout deployment in prod-eu", "helper").outcome).toEqual({
      kind: "fallback",
      agent: "helper",
    });
  });

  it("routes a request, and a question that names the action, to the workflow", () => {
    expect(outcomeOf("restart checkout in prod-eu")).toBe("routed");
    expect(outcomeOf("restart the checkout deployment in prod-eu")).toBe("routed");
    expect(outcomeOf("can you restart checkout in prod-eu?")).toBe("routed");
    expect(outcomeOf("could you bounce search in prod-eu?")).toBe("routed");
  });

  it("does not match on the values an example gives its inputs alone", () => {
    expect(outcomeOf("checkout prod-eu")).toBe("no_match");
    expect(outcomeOf("search in prod-eu")).toBe("no_match");
    expect(outcomeOf("the checkout service in prod-eu")).toBe("no_match");
  });

  it("lets a workflow that only looks answer a question", () => {
    const latency = workflow("latency-investigation", "Investigate high latency of a service", [
      "why is checkout slow",
    ]);
    expect(outcomeOf("why is the checkout service so slow?", [restart, latency])).toBe("routed");
    expect(
      routeMessage([restart, latency], "why is the checkout service so slow?", null).outcome,
    ).toMatchObject({ target: { name: "latency-investigation" } });
  });
});

describe("evidence rules", () => {
  // The routing eval's catalog: fifteen agents and workflows whose words overlap.
  const evalCatalog = (
    JSON.parse(readFileSync(new URL("../../../eval/ask/catalog.json", import.meta.url), "utf8")) as {
      candidates: Routable[];
    }
  ).candidates;
  const index = buildIndex(evalCatalog);
  const routedTo = (message: string) => {
    const decision = decide(rank(index, message));
    return decision.kind === "routed" ? decision.choice.candidate.name : decision.kind;
  };

  it("does not pick a workflow over its neighbour on a word only its description has", () => {
    // "full" is only in disk-expand's description: it says when the workflow applies, not what to do.
    expect(routedTo("the disk of host web-2 is full")).toBe("ambiguous");
    // A word of its name or routing examples is what it is asked to do.
    expect(routedTo("expand the disk of host web-2, it is full")).toBe("disk-expand");
  });

  it("treats words that several candidates' examples share as values, not vocabulary", () => {
    expect([...index.sampleValues].sort()).toEqual(["api", "checkout", "payment"]);
    // Counted as vocabulary, "payments" made the investigation whose example names it the best.
    expect(routedTo("investigate the payments service")).toBe("ambiguous");
  });

  it("counts a runner-up within a fifth of the best as ambiguous, and one word shared by many as thin", () => {
    const scored = (name: string, confidence: number) => ({
      candidate: workflow(name, ""),
      score: 1,
      confidence,
    });
    expect(decide([scored("a", 0.8), scored("b", 0.65)]).kind).toBe("ambiguous");
    expect(decide([scored("a", 0.8), scored("b", 0.6)]).kind).toBe("routed");
    const services = [
      workflow("scale-service", "Scale the replicas of a service"),
      workflow("silence-alerts", "Silence the alerts of a service"),
      workflow("restart-deployment", "Restart the deployment of a service"),
    ];
    // "service" is in scale-service's name, but every candidate has it.
    expect(decide(rank(buildIndex(services), "checkout service")).kind).not.toBe("routed");
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

  it("takes the request's object, not its verb, an input's name or a place, as the only matching word", () => {
    const loose = [
      { name: "service", pattern: "^[a-z][a-z0-9-]*$" },
      { name: "cluster", pattern: "^[a-z][a-z0-9-]*$" },
    ];
    // The target's own verb, a synonym of it and a verb it does not describe are all the action.
    expect(inputsFromMessage(restart, "restart checkout")).toEqual({ service: "checkout" });
    expect(extractInputs("bounce payments-api", loose).values).toEqual({ service: "payments-api" });
    expect(extractInputs("drain the payments deployment", loose).values).toEqual({ service: "payments" });
    expect(extractInputs("check checkout", [{ name: "service", pattern: "^[a-z]+$" }]).values).toEqual({
      service: "checkout",
    });
    // A word after "in" is the cluster's or nobody's; an input's own name is no value.
    expect(extractInputs("restart service in eu-west", loose).values).toEqual({ cluster: "eu-west" });
    expect(extractInputs("restart payments in Moon", loose).values).toEqual({ service: "payments" });
    // An adjective before the input's name describes the value; it is not one.
    for (const message of [
      "restart the broken deployment",
      "restart the last deployment",
      "the failing service",
    ]) {
      expect(extractInputs(message, loose).values, message).toEqual({});
    }
    expect(extractInputs("restart the news service", loose).values).toEqual({ service: "news" });
    // Said explicitly, a verb is a value like any other.
    expect(extractInputs("service=restart", loose).values).toEqual({ service: "restart" });
  });
});
