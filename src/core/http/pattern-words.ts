// A schema's pattern as a person reads it: a value that does not match is answered with these words
// ("integration: must be letters, digits, ...") rather than with the regular expression itself.
const WORDS = new Map<string, string>();

/** Registers the words for `pattern` and answers the pattern, for use in a schema. */
export function describedPattern(pattern: string, words: string): string {
  WORDS.set(pattern, words);
  return pattern;
}

/** The words registered for `pattern`, if any. */
export function wordsOfPattern(pattern: unknown): string | undefined {
  return typeof pattern === "string" ? WORDS.get(pattern) : undefined;
}

/** A lower-case slug, the names of agents, workflows and named webhooks. */
export const SLUG_PATTERN = describedPattern(
  "^[a-z0-9][a-z0-9_-]{0,62}$",
  "a lower-case slug: a-z, digits, _ and -, starting with a letter or digit, at most 63 characters",
);
