// Words for routing: lower case, split on anything that is not a letter or digit, English stop words
// dropped, a light suffix stemmer, and a small thesaurus of operations verbs so that "bounce" finds
// what "restart" describes. Shared by the index and the query, so both sides agree.

const STOP_WORDS = new Set(
  (
    "a an and are as at be been but by can could do does for from get give go has have hey hi how i " +
    "if in into is it its let me my of on or our please run so some that the their them then there " +
    "these this to up us want was we what when where which who why will with would you your can't " +
    "cannot just need now right quickly asap kindly also all any really very since still again it's"
  ).split(" "),
);

/** Verbs and nouns engineers use for the same operation; each maps to one canonical word. */
const THESAURUS: Record<string, string> = {
  bounce: "restart",
  reboot: "restart",
  recycle: "restart",
  kick: "restart",
  revert: "rollback",
  undo: "rollback",
  downgrade: "rollback",
  resize: "scale",
  grow: "scale",
  shrink: "scale",
  container: "pod",
  cert: "certificate",
  tls: "certificate",
  ssl: "certificate",
  db: "database",
  postgres: "database",
  postgresql: "database",
  mysql: "database",
  page: "oncall",
  paging: "oncall",
  k8s: "kubernetes",
  logging: "log",
  find: "search",
  grep: "search",
  lookup: "search",
  slow: "latency",
  slowness: "latency",
  disk: "disk",
  storage: "disk",
  volume: "disk",
  silence: "silence",
  mute: "silence",
  snooze: "silence",
  purge: "flush",
  clear: "flush",
  invalidate: "flush",
};

/** A light English stemmer: enough that restarting, restarted and restarts meet restart. */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  if (word.endsWith("ies") && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith("sses")) return word.slice(0, -2);
  if (word.endsWith("ing") && word.length > 5) return undouble(word.slice(0, -3));
  if (word.endsWith("ed") && word.length > 4) return undouble(word.slice(0, -2));
  if (word.endsWith("s") && !word.endsWith("ss") && !word.endsWith("us")) return word.slice(0, -1);
  return word;
}

function undouble(word: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(word) && !/(ll|ss|zz)$/.test(word) ? word.slice(0, -1) : word;
}

/** The words of a text as they are matched, in order. Numbers of one or two digits say nothing of the task. */
export function terms(text: string): string[] {
  return words(text)
    .filter((word) => !STOP_WORDS.has(word) && !/^\d{1,2}$/.test(word))
    .map((word) => {
      const base = stem(word);
      return THESAURUS[base] ?? THESAURUS[word] ?? base;
    });
}

/** Lower-cased words, without stop-word removal or stemming. */
export function words(text: string): string[] {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

export const isStopWord = (word: string) => STOP_WORDS.has(word);

/**
 * Words of the requests Ask gets that describe the action or its object, never name it: verbs
 * ("restart checkout", "drain node-7") and the adjectives before a noun ("the broken deployment",
 * "the last release"). They are an input's value only when a `name=value` says so. Nouns that
 * could be names (search, cache, primary) stay values.
 */
const REQUEST_VERBS = new Set(
  (
    "restart bounce reboot recycle kick rollback revert undo downgrade scale resize grow shrink " +
    "silence mute snooze flush purge clear invalidate check show list describe investigate diagnose " +
    "debug fix triage drain cordon uncordon stop start kill delete remove tail open close ack " +
    "acknowledge resolve escalate notify create update upgrade patch rotate renew increase decrease " +
    "reduce add enable disable pause resume expand cleanup sync reload redeploy failover promote page wake"
  ).split(" "),
);
/** Request verbs that only look: a candidate whose verbs are all of these changes nothing. */
const LOOKING_VERBS = new Set("check show list describe investigate diagnose debug triage tail".split(" "));
// Two-word verbs written as one, so that "roll back" meets rollback and "fail over" failover.
const PHRASAL_VERBS: [RegExp, string][] = [
  [/\broll(?:s|ed|ing)?\s+back\b/giu, "rollback"],
  [/\bfail(?:s|ed|ing)?\s+over\b/giu, "failover"],
  [/\bclean(?:s|ed|ing)?\s+up\b/giu, "cleanup"],
];
// Matched as written: a stem would make "news" the adjective "new".
const REQUEST_ADJECTIVES = new Set(
  (
    "broken failing failed erroring crashing crashed stuck hung hanging slow down dead unhealthy " +
    "degraded affected faulty flaky noisy overloaded misbehaving offending problematic bad wrong " +
    "last latest previous prior next new newest old oldest current same other whole entire"
  ).split(" "),
);

export const isRequestWord = (word: string) =>
  REQUEST_ADJECTIVES.has(word) || REQUEST_VERBS.has(word) || REQUEST_VERBS.has(stem(word));

/**
 * The verbs of a text that change something (restart, roll back, flush; not check or show), as
 * terms: synonyms meet ("bounce" gives restart).
 */
export function actionVerbs(text: string): Set<string> {
  const joined = PHRASAL_VERBS.reduce((current, [phrase, verb]) => current.replace(phrase, verb), text);
  const found = new Set<string>();
  for (const word of words(joined)) {
    const base = stem(word);
    if (LOOKING_VERBS.has(word) || LOOKING_VERBS.has(base)) continue;
    if (REQUEST_VERBS.has(word) || REQUEST_VERBS.has(base)) for (const term of terms(word)) found.add(term);
  }
  return found;
}

const QUESTION_OPENING =
  /^(?:(?:hey|hi|ok|okay|so|please|quick question)\b[\s,:;.!-]*)*(?:what|who|whom|whose|which|how|why|when|where|is|isn|are|aren|am|was|wasn|were|does|doesn|did|didn|can|could|should|would|will|won|shall|may|might)\b/iu;

/** A message that asks a question: an interrogative opening (what, who, is, can, ...) or a final "?". */
export const asksQuestion = (message: string) =>
  QUESTION_OPENING.test(message.trim()) || /\?[\s"')\]]*$/u.test(message);

/** Damerau-Levenshtein distance (adjacent transpositions), stopping early past `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i += 1) rows.push([i]);
  for (let j = 1; j <= b.length; j += 1) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i += 1) {
    let best = Number.POSITIVE_INFINITY;
    const row = rows[i] as number[];
    const prev = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = value;
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
  }
  return (rows[a.length] as number[])[b.length] as number;
}
