// One routing decision for a message over a catalog, without the database: what Ask and the routing
// eval (eval/ask) both run.
import { extractInputs } from "./extract.ts";
import {
  buildIndex,
  type CandidateType,
  CONFIDENCE_THRESHOLD,
  decide,
  type Routable,
  rank,
  type Scored,
} from "./rank.ts";
import { actionVerbs, asksQuestion, terms, words } from "./text.ts";

/** Candidates shown in the answer. */
const SHOWN_CANDIDATES = 5;

export type RouteOutcome =
  | { kind: "routed"; target: Routable; confidence: number }
  | { kind: "ambiguous" }
  | { kind: "fallback"; agent: string }
  | { kind: "no_match" };

export interface Routing {
  outcome: RouteOutcome;
  candidates: { name: string; confidence: number; candidate_type: CandidateType }[];
}

const KEY_VALUE_VALUES = /[A-Za-z_][A-Za-z0-9_-]*\s*(?:=|:)\s*(?:"([^"]*)"|'([^']*)'|([^\s,;]+))/g;

/** Words written as `key=value` values: they say what to act on, not what to do. */
function valueWords(message: string): Set<string> {
  const found = new Set<string>();
  for (const match of message.matchAll(KEY_VALUE_VALUES)) {
    for (const word of words(match[1] ?? match[2] ?? match[3] ?? ""))
      for (const term of terms(word)) found.add(term);
  }
  return found;
}

/**
 * Ranks `catalog` against the message. A confident, clear best is routed; a best within the margin
 * of the runner-up is ambiguous (nothing runs); a weak best, or a best that changes something for a
 * question that does not name its action, goes to `fallbackAgent` when there is one.
 */
export function routeMessage(catalog: Routable[], message: string, fallbackAgent: string | null): Routing {
  const ignore = valueWords(message);
  const ranked: Scored[] = rank(buildIndex(catalog), message, ignore);
  const decision = decide(ranked);
  // An ambiguous answer lists only the close ones: the caller picks among them.
  const shown = decision.kind === "ambiguous" ? decision.tied : ranked;
  const candidates = shown.slice(0, SHOWN_CANDIDATES).map((item) => ({
    name: item.candidate.name,
    confidence: item.confidence,
    candidate_type: item.candidate.type,
  }));
  if (
    decision.kind === "routed" &&
    confidentBeyondValues(catalog, message, ignore, decision.choice.candidate) &&
    namesItsAction(decision.choice.candidate, message)
  ) {
    return {
      outcome: { kind: "routed", target: decision.choice.candidate, confidence: decision.choice.confidence },
      candidates,
    };
  }
  if (decision.kind === "ambiguous") return { outcome: { kind: "ambiguous" }, candidates };
  return {
    outcome: fallbackAgent ? { kind: "fallback", agent: fallbackAgent } : { kind: "no_match" },
    candidates,
  };
}

/**
 * The values an example gives its inputs rank candidates (the examples of a workflow name the
 * services it is used on), but do not carry a match alone: "checkout in prod-eu" has named what to
 * act on, not what to do. The best must stay confident with them counted as values.
 */
function confidentBeyondValues(catalog: Routable[], message: string, ignore: Set<string>, target: Routable) {
  const plain = rank(buildIndex(catalog, { valuesOf: valuesFrom }), message, ignore);
  return (plain.find((item) => item.candidate === target)?.confidence ?? 0) >= CONFIDENCE_THRESHOLD;
}

/**
 * A question ("what is the error rate of checkout in prod-eu?", "who owns the checkout deployment?")
 * starts a candidate that changes something only when it names one of its actions ("can you
 * restart checkout?"): words it shares with the candidate's examples do not make it a request to
 * restart a deployment. A candidate that only looks (investigates, shows) may answer any question.
 */
function namesItsAction(candidate: Routable, message: string): boolean {
  if (!asksQuestion(message)) return true;
  const own = actionVerbs(
    [candidate.name.replace(/[-_]/g, " "), candidate.description, ...candidate.examples].join("\n"),
  );
  if (own.size === 0) return true;
  const asked = actionVerbs(message);
  return [...own].some((verb) => asked.has(verb));
}

/** The target's inputs read from the message (see extract.ts), its own words excluded as values. */
export function inputsFromMessage(
  target: Routable,
  message: string,
  options: { integrations?: string[]; skip?: Set<string>; correctable?: Set<string> } = {},
): Record<string, string> {
  const vocabulary = new Set(terms(`${target.name.replace(/[-_]/g, " ")} ${target.description}`));
  return extractInputs(message, target.inputs, { ...options, vocabulary }).values;
}

const valuesFrom = (target: Routable, text: string) => Object.values(inputsFromMessage(target, text));
