// The routing eval: every message of messages.json routed over catalog.json as Ask routes it (no
// LLM), scored three ways: top-1 accuracy on answerable messages, the share of unanswerable ones
// (no match, ambiguous) refused or sent to the fallback agent, and input extraction exactness on
// routed answerable messages that list their expected inputs.
import { readFileSync } from "node:fs";
import type { Routable } from "../../src/automation/ask/rank.ts";
import { inputsFromMessage, routeMessage } from "../../src/automation/ask/route.ts";

interface Labelled {
  message: string;
  /** The agent or workflow that should answer, or "refuse". */
  expect: string;
  kind?: "no_match" | "ambiguous";
  inputs?: Record<string, string>;
}

const read = <T>(name: string): T => JSON.parse(readFileSync(new URL(name, import.meta.url), "utf8")) as T;
const percent = (part: number, whole: number) => (whole ? `${((100 * part) / whole).toFixed(1)}%` : "n/a");

export default async function runAskEval(): Promise<void> {
  const catalog = read<{ fallback_agent: string; integrations: string[]; candidates: Routable[] }>(
    "catalog.json",
  );
  const messages = read<Labelled[]>("messages.json");
  const verbose = process.env.EVAL_VERBOSE === "1";
  let answerable = 0;
  let correct = 0;
  let unanswerable = 0;
  let refused = 0;
  let withInputs = 0;
  let exactInputs = 0;
  const misses: string[] = [];
  for (const item of messages) {
    const routing = routeMessage(catalog.candidates, item.message, catalog.fallback_agent);
    const outcome = routing.outcome;
    const chosen =
      outcome.kind === "routed"
        ? outcome.target.name
        : outcome.kind === "fallback"
          ? `fallback`
          : outcome.kind;
    const top = routing.candidates
      .slice(0, 3)
      .map((c) => `${c.name}:${c.confidence}`)
      .join(" ");
    if (item.expect === "refuse") {
      unanswerable += 1;
      // Refused: nothing runs (ambiguous, no match), the fallback agent answers, or the fallback agent itself is chosen.
      const ok = outcome.kind !== "routed" || outcome.target.name === catalog.fallback_agent;
      if (ok) refused += 1;
      else misses.push(`routed, expected refusal (${item.kind}): "${item.message}" -> ${chosen} [${top}]`);
      continue;
    }
    answerable += 1;
    if (outcome.kind !== "routed" || outcome.target.name !== item.expect) {
      misses.push(`expected ${item.expect}: "${item.message}" -> ${chosen} [${top}]`);
      continue;
    }
    correct += 1;
    if (!item.inputs) continue;
    withInputs += 1;
    const extracted = inputsFromMessage(outcome.target, item.message, { integrations: catalog.integrations });
    const expected = Object.entries(item.inputs).sort();
    const got = Object.entries(extracted).sort();
    if (JSON.stringify(expected) === JSON.stringify(got)) exactInputs += 1;
    else
      misses.push(
        `inputs of "${item.message}": expected ${JSON.stringify(item.inputs)}, got ${JSON.stringify(extracted)}`,
      );
  }
  const targets = new Set(messages.map((item) => item.expect).filter((name) => name !== "refuse"));
  console.log(
    `ask routing eval: ${messages.length} messages, ${catalog.candidates.length} agents and workflows (${targets.size} expected targets)`,
  );
  console.log(
    `  top-1 accuracy (answerable):        ${correct}/${answerable} = ${percent(correct, answerable)}`,
  );
  console.log(
    `  refused or fallback (unanswerable): ${refused}/${unanswerable} = ${percent(refused, unanswerable)}`,
  );
  console.log(
    `  input extraction exact:             ${exactInputs}/${withInputs} = ${percent(exactInputs, withInputs)}`,
  );
  if (misses.length > 0) {
    console.log(`  misses${verbose ? "" : " (EVAL_VERBOSE=1 shows the top candidates)"}:`);
    for (const miss of misses) console.log(`    ${verbose ? miss : miss.replace(/ \[.*\]$/, "")}`);
  }
}
