// Title and description (alert-sources.md 1.7).
import { rawText } from "./json-value.ts";

export const TITLE_MAX_CHARS = 512;
export const DESCRIPTION_MAX_CHARS = 32_768;

const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/g;

/**
 * Cuts `text` to at most `maxChars` characters. Characters are code points, so a cut never splits a
 * surrogate pair into invalid UTF-16.
 */
export function truncateChars(text: string, maxChars: number): string {
  // Fast path: the UTF-16 length is an upper bound of the code point count.
  if (text.length <= maxChars) return text;
  let result = "";
  let count = 0;
  for (const char of text) {
    if (count === maxChars) break;
    result += char;
    count += 1;
  }
  return result;
}

/** The number of characters (code points) of `text`, the unit of every length limit. */
export function charCount(text: string): number {
  let count = 0;
  for (const _char of text) count += 1;
  return count;
}

/** An AlertEvent's title and whether it is the fallback. */
export interface TitleResult {
  title: string;
  title_is_fallback: boolean;
}

/**
 * The event title: trimmed, line breaks as spaces, cut to 512 characters. When `raw` gives no text it
 * is `"<source_type> alert <external_uid>"` with `title_is_fallback` true (a fallback title never
 * overwrites a stored one).
 */
export function normalizeTitle(raw: unknown, sourceType: string, externalUid: string): TitleResult {
  const text = (rawText(raw) ?? "").replace(LINE_BREAK, " ");
  const title = truncateChars(text, TITLE_MAX_CHARS).trim();
  if (title) return { title, title_is_fallback: false };
  return { title: `${sourceType} alert ${externalUid}`, title_is_fallback: true };
}

/** The event description: trimmed and cut to 32,768 characters; `""` when `raw` gives no text. */
export function normalizeDescription(raw: unknown): string {
  return truncateChars(rawText(raw) ?? "", DESCRIPTION_MAX_CHARS).trim();
}

/**
 * "A, then B" of the source sections: the non-empty parts (trimmed) joined by one blank line, a part
 * equal to the one before it written once (a summary repeated as the description). The result is
 * normalized like `normalizeDescription`.
 */
export function joinDescription(...parts: unknown[]): string {
  const kept: string[] = [];
  for (const part of parts) {
    const text = rawText(part);
    if (text && text !== kept.at(-1)) kept.push(text);
  }
  return normalizeDescription(kept.join("\n\n"));
}
