// Ranking the tenant's routable agents and workflows against a message: BM25 over each candidate's
// name, description, routing examples and input names, with typo tolerance for words the catalog
// does not know. Confidence (0..1) is the share of the message's weight the candidate covers: the
// IDF of the words it matches over the IDF of all the message's words, where a word no candidate
// knows counts at a reduced weight (it may be a value such as a service name, or a sign the message
// is about something else). The decision never routes silently on a weak or ambiguous match.
import { editDistance, terms } from "./text.ts";

export type CandidateType = "agent" | "workflow";

export interface RoutableInput {
  name: string;
  description?: string;
  required?: boolean;
  pattern?: string;
  default?: string;
}

export interface Routable {
  type: CandidateType;
  name: string;
  description: string;
  examples: string[];
  inputs: RoutableInput[];
}

export interface Scored {
  candidate: Routable;
  score: number;
  confidence: number;
}

/** Below this confidence the best match is weak: the fallback agent answers, or nothing runs. */
export const CONFIDENCE_THRESHOLD = 0.45;
/**
 * When the runner-up is within this much confidence of the best, or within this share of the best's
 * confidence, the message is ambiguous: a lead of 0.15 means little when the best covers 0.8.
 */
export const AMBIGUITY_MARGIN = 0.1;
export const AMBIGUITY_SHARE = 0.2;

const K1 = 1.2;
const B = 0.75;
/** Field weights: a word in the name counts three times, in a routing example twice. */
const NAME_WEIGHT = 3;
const EXAMPLE_WEIGHT = 2;
/** The weight of a message word no candidate knows, as a share of the mean IDF. */
const UNKNOWN_WORD_WEIGHT = 0.5;
const UNKNOWN_VALUE_WEIGHT = 0.2;
/** A candidate that matches a single word of the message, not one of its name, keeps this share. */
const SINGLE_WORD_FACTOR = 0.6;
/**
 * A word the candidate has only in its description counts for this share of its weight in the
 * confidence: descriptions also say when a workflow applies ("when its disk is nearly full"), so a
 * message that only states that condition has not said which of the workflows on the object to run.
 */
const DESCRIPTION_ONLY_WEIGHT = 0.5;

interface Document {
  candidate: Routable;
  frequencies: Map<string, number>;
  nameTerms: Set<string>;
  /** Words of the name, routing examples and input names: what the candidate is asked to do, and on what. */
  strongTerms: Set<string>;
  length: number;
}

export interface RoutingIndex {
  documents: Document[];
  /** Words seen only in the routing examples of several candidates: sample values such as service names. */
  sampleValues: Set<string>;
  idf: Map<string, number>;
  averageLength: number;
  meanIdf: number;
  /** The IDF of a word only one candidate has. */
  maxIdf: number;
}

/** The values a candidate's inputs take from a text (extract.ts reads them). */
export type ValuesOf = (candidate: Routable, text: string) => string[];

/**
 * With `valuesOf`, the words an example gives its candidate's inputs ("checkout" and "prod-eu" in
 * "restart the checkout deployment in prod-eu") count as sample values too, even in one example.
 */
export function buildIndex(candidates: Routable[], options: { valuesOf?: ValuesOf } = {}): RoutingIndex {
  const sampleValues = findSampleValues(candidates, options.valuesOf);
  const documents = candidates.map((candidate) => {
    const bag: string[] = [];
    const strongTerms = new Set<string>();
    const add = (text: string, weight: number, strong = true) => {
      const found = terms(text).filter((term) => !sampleValues.has(term));
      for (let i = 0; i < weight; i += 1) bag.push(...found);
      if (strong) for (const term of found) strongTerms.add(term);
    };
    add(candidate.name.replace(/[-_]/g, " "), NAME_WEIGHT);
    add(candidate.description, 1, false);
    for (const example of candidate.examples) add(example, EXAMPLE_WEIGHT);
    for (const input of candidate.inputs) add(input.name.replace(/_/g, " "), 1);
    const frequencies = new Map<string, number>();
    for (const term of bag) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    const nameTerms = new Set(terms(candidate.name.replace(/[-_]/g, " ")));
    return { candidate, frequencies, nameTerms, strongTerms, length: bag.length };
  });
  const containing = new Map<string, number>();
  for (const document of documents) {
    for (const term of document.frequencies.keys()) containing.set(term, (containing.get(term) ?? 0) + 1);
  }
  const n = documents.length;
  const idf = new Map<string, number>();
  for (const [term, count] of containing) idf.set(term, Math.log(1 + (n - count + 0.5) / (count + 0.5)));
  const idfValues = [...idf.values()];
  return {
    documents,
    sampleValues,
    idf,
    averageLength: documents.reduce((sum, document) => sum + document.length, 0) / Math.max(1, n),
    meanIdf: idfValues.reduce((sum, value) => sum + value, 0) / Math.max(1, idfValues.length),
    maxIdf: Math.log(1 + (n - 0.5) / 1.5),
  };
}

/**
 * Routing examples carry sample values ("bounce the payments service", "why is checkout slow"). A word
 * that several candidates' examples share but no name, description or input name has says what to
 * act on, not what to do: counting it would favour whichever candidate has the most examples. With
 * `valuesOf`, so does a word an example gives its candidate's inputs.
 */
function findSampleValues(candidates: Routable[], valuesOf?: ValuesOf): Set<string> {
  const vocabulary = new Set<string>();
  const examplesOf = new Map<string, number>();
  const given = new Set<string>();
  for (const candidate of candidates) {
    const own = new Set(candidate.examples.flatMap((example) => terms(example)));
    for (const term of own) examplesOf.set(term, (examplesOf.get(term) ?? 0) + 1);
    for (const example of candidate.examples) {
      for (const value of valuesOf?.(candidate, example) ?? [])
        for (const term of terms(value)) given.add(term);
    }
    const described = [
      candidate.name.replace(/[-_]/g, " "),
      candidate.description,
      ...candidate.inputs.map((input) => input.name.replace(/_/g, " ")),
    ];
    for (const text of described) for (const term of terms(text)) vocabulary.add(term);
  }
  return new Set(
    [...examplesOf]
      .filter(([term, count]) => (count >= 3 || given.has(term)) && !vocabulary.has(term))
      .map(([term]) => term),
  );
}

/** A message word as the index knows it: itself, or the closest known word within a small edit distance. */
function resolveTerm(index: RoutingIndex, term: string): string | null {
  if (index.idf.has(term)) return term;
  if (term.length < 4 || /\d/.test(term)) return null;
  const max = term.length >= 8 ? 2 : 1;
  let best: string | null = null;
  let bestDistance = max + 1;
  for (const known of index.idf.keys()) {
    if (known.length < 4) continue;
    const distance = editDistance(term, known, max);
    if (distance < bestDistance) {
      best = known;
      bestDistance = distance;
    }
  }
  return best;
}

/** Looks like a value (has a digit, or was written with a dash, dot or slash): weighs less when unknown. */
const looksLikeValue = (word: string) => /\d/.test(word);

/** Every candidate scored, best first. `ignore` holds words already taken as input values. */
export function rank(index: RoutingIndex, message: string, ignore: Set<string> = new Set()): Scored[] {
  const queryTerms = [...new Set(terms(message))].filter((term) => !ignore.has(term));
  const resolved: { term: string | null; weight: number }[] = queryTerms.map((term) => {
    if (index.sampleValues.has(term)) return { term: null, weight: index.meanIdf * UNKNOWN_VALUE_WEIGHT };
    const known = resolveTerm(index, term);
    if (known) return { term: known, weight: index.idf.get(known) ?? 0 };
    return {
      term: null,
      weight: index.meanIdf * (looksLikeValue(term) ? UNKNOWN_VALUE_WEIGHT : UNKNOWN_WORD_WEIGHT),
    };
  });
  const unique = new Map<string, number>();
  let totalWeight = 0;
  for (const item of resolved) {
    if (item.term && unique.has(item.term)) continue;
    if (item.term) unique.set(item.term, item.weight);
    totalWeight += item.weight;
  }
  const scored = index.documents.map((document) => {
    let score = 0;
    let covered = 0;
    const matched: string[] = [];
    for (const [term, idf] of unique) {
      const frequency = document.frequencies.get(term) ?? 0;
      if (frequency === 0) continue;
      covered += document.strongTerms.has(term) ? idf : idf * DESCRIPTION_ONLY_WEIGHT;
      matched.push(term);
      score +=
        (idf * frequency * (K1 + 1)) /
        (frequency + K1 * (1 - B + (B * document.length) / Math.max(1, index.averageLength)));
    }
    // One word is thin evidence unless it is the candidate's own: in its name and in no other
    // candidate ("buy more coffee", "checkout service").
    const only = matched[0] as string;
    const thin =
      matched.length === 1 && !(document.nameTerms.has(only) && index.idf.get(only) === index.maxIdf);
    const confidence = (totalWeight > 0 ? covered / totalWeight : 0) * (thin ? SINGLE_WORD_FACTOR : 1);
    return { candidate: document.candidate, score, confidence };
  });
  return scored
    .filter((item) => item.score > 0)
    .sort(
      (a, b) =>
        b.confidence - a.confidence || b.score - a.score || a.candidate.name.localeCompare(b.candidate.name),
    )
    .map((item) => ({ ...item, confidence: round(item.confidence) }));
}

const round = (value: number) => Math.round(Math.min(1, Math.max(0, value)) * 1000) / 1000;

export type Decision =
  | { kind: "routed"; choice: Scored }
  | { kind: "ambiguous"; tied: Scored[] }
  | { kind: "weak"; best: Scored | null };

/** Routed only when the best is confident and clearly ahead of the runner-up. */
export function decide(ranked: Scored[]): Decision {
  const [best, second] = ranked;
  if (!best || best.confidence < CONFIDENCE_THRESHOLD) return { kind: "weak", best: best ?? null };
  const margin = Math.max(AMBIGUITY_MARGIN, AMBIGUITY_SHARE * best.confidence);
  if (second && best.confidence - second.confidence < margin) {
    return { kind: "ambiguous", tied: ranked.filter((item) => best.confidence - item.confidence < margin) };
  }
  return { kind: "routed", choice: best };
}
