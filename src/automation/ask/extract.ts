// Reading a target's declared inputs out of a message, in this order (the first that finds a value
// wins for an input):
//   1. `name=value` and `name: value` (quotes allowed; the name case-insensitive, - and _ alike),
//      which also corrects a value an earlier answer in the session gave;
//   2. a word that is a known entity name (an integration of the tenant) for an input named after it;
//   3. a word next to the input's name or a usual alias of it: "checkout service", "namespace payments",
//      "5 replicas"; and after in/on/at for location inputs (cluster, namespace, region, ...);
//   4. the only word of the message that matches the input's declared pattern, among the words that
//      could be a value at all (not an input's name, a verb of the request or a location after in/on/at).
// A value that does not match the input's pattern is not taken, nor is a verb or adjective of the
// request ("restart", "drain", "the broken deployment") without a `name=value`.
import { matchesPattern } from "../input-pattern.ts";
import type { RoutableInput } from "./rank.ts";
import { isRequestWord, isStopWord, terms, words } from "./text.ts";

const ALIASES: Record<string, string[]> = {
  service: ["service", "svc", "app", "application", "deployment", "deploy"],
  deployment: ["deployment", "deploy", "service", "app"],
  cluster: ["cluster"],
  namespace: ["namespace", "ns"],
  environment: ["environment", "env"],
  env: ["environment", "env"],
  region: ["region"],
  host: ["host", "server", "node", "machine"],
  database: ["database", "db"],
  replicas: ["replicas", "replica", "instances", "pods"],
  version: ["version", "release", "tag"],
  queue: ["queue"],
  bucket: ["bucket"],
  domain: ["domain", "certificate", "cert"],
  integration: ["integration"],
};
const LOCATION_INPUTS = new Set([
  "cluster",
  "namespace",
  "environment",
  "env",
  "region",
  "zone",
  "datacenter",
]);
const PREPOSITIONS = new Set(["in", "on", "at"]);

const KEY_VALUE = /([A-Za-z_][A-Za-z0-9_-]*)\s*(?:=|:)\s*(?:"([^"]*)"|'([^']*)'|([^\s,;]+))/g;

const normalizeKey = (key: string) => key.toLowerCase().replace(/-/g, "_");

const fits = (input: RoutableInput, value: string) => !input.pattern || matchesPattern(input.pattern, value);

/** A word of the message as written (case kept), with surrounding punctuation trimmed. */
function stripPunctuation(token: string): string {
  return token.replace(/^[("'`[{<]+|[)"'`\]}>.,;:!?]+$/g, "");
}

const namesOf = (input: RoutableInput) => {
  const base = input.name.toLowerCase();
  const parts = base.split("_").filter(Boolean);
  return new Set([
    base,
    ...parts.slice(-1),
    ...(ALIASES[base] ?? []),
    ...(ALIASES[parts.at(-1) ?? ""] ?? []),
  ]);
};

export interface Extraction {
  values: Record<string, string>;
  /** Words of the message taken as values (lower case): the ranking ignores them. */
  used: Set<string>;
}

export function extractInputs(
  message: string,
  declared: RoutableInput[],
  context: {
    /** Integration names of the tenant. */
    integrations?: string[];
    /** Words of the target's name and description (as text.ts terms): never taken as values. */
    vocabulary?: Set<string>;
    /** Inputs already given: not read from the message. */
    skip?: Set<string>;
    /** Of those, inputs an explicit `name=value` in the message still sets (a correction). */
    correctable?: Set<string>;
  } = {},
): Extraction {
  const skip = context.skip ?? new Set<string>();
  const vocabulary = context.vocabulary ?? new Set<string>();
  const values: Record<string, string> = {};
  const used = new Set<string>();
  const byKey = new Map(declared.map((input) => [normalizeKey(input.name), input]));
  const correctable = context.correctable ?? new Set<string>();
  const take = (input: RoutableInput, value: string, explicit = false) => {
    const given = skip.has(input.name) && !(explicit && correctable.has(input.name));
    if (values[input.name] !== undefined || given || !value) return false;
    if (!fits(input, value)) return false;
    values[input.name] = value;
    used.add(value.toLowerCase());
    for (const word of words(value)) used.add(word);
    return true;
  };
  for (const match of message.matchAll(KEY_VALUE)) {
    const input = byKey.get(normalizeKey(match[1] ?? ""));
    if (input) take(input, (match[2] ?? match[3] ?? match[4] ?? "").trim(), true);
  }
  const raw = message.split(/\s+/).filter(Boolean);
  const list = raw.map(stripPunctuation);
  const lower = list.map((token) => token.toLowerCase());
  const integrations = new Map((context.integrations ?? []).map((name) => [name.toLowerCase(), name]));
  for (const input of declared) {
    if (!namesOf(input).has("integration")) continue;
    const found = lower.find((token) => integrations.has(token));
    if (found) take(input, integrations.get(found) ?? found);
  }
  const isValueWord = (token: string | undefined, names: Set<string>) => {
    if (!token || /[=:]/.test(token)) return false;
    const word = token.toLowerCase();
    if (isStopWord(word) || isRequestWord(word) || names.has(word)) return false;
    return !terms(word).some((term) => vocabulary.has(term));
  };
  for (const input of declared) {
    if (values[input.name] !== undefined) continue;
    const names = namesOf(input);
    for (let i = 0; i < list.length; i += 1) {
      if (!names.has(lower[i] ?? "")) continue;
      // "the checkout service" names the value before the name; "service checkout" after it. A
      // punctuation mark between them ("service, make it") ends the phrase.
      const before = /[,;:.!?]$/.test(raw[i - 1] ?? "") ? undefined : list[i - 1];
      const after = /[,;:.!?]$/.test(raw[i] ?? "") ? undefined : list[i + 1];
      if (isValueWord(before, names) && take(input, before as string)) break;
      if (isValueWord(after, names) && take(input, after as string)) break;
    }
    if (values[input.name] === undefined && LOCATION_INPUTS.has(input.name.toLowerCase())) {
      for (let i = 0; i < list.length - 1; i += 1) {
        const next = list[i + 1] as string;
        // Without a pattern only a value-looking word (a dash or a digit): "in prod-eu", not "in production".
        const plausible = input.pattern !== undefined || /[-\d]/.test(next);
        if (PREPOSITIONS.has(lower[i] ?? "") && plausible && isValueWord(next, names)) {
          if (take(input, list[i + 1] as string)) break;
        }
      }
    }
  }
  // A word after in/on/at names a place: the value of a location input, or of none.
  const locationDeclared = declared.some((input) => LOCATION_INPUTS.has(input.name.toLowerCase()));
  const allNames = new Set(declared.flatMap((input) => [...namesOf(input)]));
  for (const input of declared) {
    if (values[input.name] !== undefined || !input.pattern) continue;
    const placeless = locationDeclared && !LOCATION_INPUTS.has(input.name.toLowerCase());
    const candidates = list.filter(
      (token, i) =>
        !used.has(token.toLowerCase()) &&
        isValueWord(token, allNames) &&
        !(placeless && PREPOSITIONS.has(lower[i - 1] ?? "")) &&
        fits(input, token),
    );
    const matching = [...new Set(candidates)];
    if (matching.length === 1) take(input, matching[0] as string);
  }
  return { values, used };
}
