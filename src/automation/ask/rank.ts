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
/** When the runner-up is within this much confidence of the best, the message is ambiguous. */
export const AMBIGUITY_MARGIN = 0.1;

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

interface Document {
  candidate: Routable;
  frequencies: Map<string, number>;
  nameTerms: Set<string>;
  length: number;
}

export interface RoutingIndex {
  documents: Document[];
  idf: Map<string, number>;
  averageLength: number;
  meanIdf: number;
}

export function buildIndex(candidates: Routable[]): RoutingIndex {
  const documents = candidates.map((candidate) => {
    const bag: string[] = [];
    const add = (text: string, weight: number) => {
      const found = terms(text);
      for (let i = 0; i < weight; i += 1) bag.push(...found);
    };
    add(candidate.name.replace(/[-_]/g, " "), NAME_WEIGHT);
    add(candidate.description, 1);
    for (const example of candidate.examples) add(example, EXAMPLE_WEIGHT);
    for (const input of candidate.inputs) add(input.name.replace(/_/g, " "), 1);
    const frequencies = new Map<string, number>();
    for (const term of bag) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    const nameTerms = new Set(terms(candidate.name.replace(/[-_]/g, " ")));
    return { candidate, frequencies, nameTerms, length: bag.length };
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
    idf,
    averageLength: documents.reduce((sum, document) => sum + document.length, 0) / Math.max(1, n),
    meanIdf: idfValues.reduce((sum, value) => sum + value, 0) / Math.max(1, idfValues.length),
  };
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
      covered += idf;
      matched.push(term);
      score +=
        (idf * frequency * (K1 + 1)) /
        (frequency + K1 * (1 - B + (B * document.length) / Math.max(1, index.averageLength)));
    }
    // One shared word that is not in the candidate's name is thin evidence ("buy more coffee").
    const thin = matched.length === 1 && !document.nameTerms.has(matched[0] as string);
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
  if (second && best.confidence - second.confidence < AMBIGUITY_MARGIN) {
    return {
      kind: "ambiguous",
      tied: ranked.filter((item) => best.confidence - item.confidence < AMBIGUITY_MARGIN),
    };
  }
  return { kind: "routed", choice: best };
}
