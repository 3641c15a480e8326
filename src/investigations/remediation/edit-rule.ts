// Edits one alerting rule in the text of a Prometheus rule file, keeping everything else byte for
// byte (comments, order, quoting), so the proposed diff shows only the fix. The rule is found by its
// `alert:` name; its block is the lines of that list item.
import type { RuleFix } from "../investigator/conclude.ts";

export type RuleEdit = { text: string; summary: string } | { text: null; reason: string };

const indentOf = (line: string) => line.length - line.trimStart().length;
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const NUMERAL = "-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?";

/** Seconds of a Prometheus duration such as 90s, 5m or 1h30m; null when it is not one. */
export function durationSeconds(text: string): number | null {
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 };
  const parts = [...text.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)];
  if (!parts.length || parts.map((part) => part[0]).join("") !== text) return null;
  return parts.reduce((sum, [, count, unit]) => sum + Number(count) * (units[unit as string] ?? 0), 0);
}

interface RuleBlock {
  /** Line indexes [start, end) of the rule's list item. */
  start: number;
  end: number;
  /** Column of the rule's keys (alert:, expr:, for:). */
  keyIndent: number;
}

/** The block of the rule named `alertname`, or null when the text has none. */
export function findRule(lines: string[], alertname: string): RuleBlock | null {
  const name = new RegExp(`^(\\s*)(-\\s+)?alert:\\s*(["']?)${escapeRegExp(alertname)}\\3\\s*(#.*)?$`);
  const at = lines.findIndex((line) => name.test(line));
  if (at < 0) return null;
  const match = name.exec(lines[at] as string) as RegExpExecArray;
  const keyIndent = (match[1]?.length ?? 0) + (match[2]?.length ?? 0);
  const startsItem = (line: string) => /^\s*-\s/.test(line) && indentOf(line) < keyIndent;
  let start = at;
  if (!match[2]) {
    // The item began on an earlier key (`- expr: ...` before `alert:`).
    while (start > 0) {
      const previous = lines[start - 1] as string;
      if (previous.trim() && indentOf(previous) < keyIndent && !startsItem(previous)) return null;
      start -= 1;
      if (startsItem(previous)) break;
    }
  }
  let end = at + 1;
  while (end < lines.length) {
    const line = lines[end] as string;
    if (line.trim() && !line.trimStart().startsWith("#") && indentOf(line) < keyIndent) break;
    end += 1;
  }
  while (end > at + 1 && !(lines[end - 1] as string).trim()) end -= 1;
  return { start, end, keyIndent };
}

/** Index of the line holding `key:` at the rule's key column, within the block. */
function keyLine(lines: string[], block: RuleBlock, key: string): number {
  const pattern = new RegExp(`^(\\s*-\\s+|\\s*)${key}:`);
  for (let index = block.start; index < block.end; index += 1) {
    const line = lines[index] as string;
    const match = pattern.exec(line);
    if (match && (match[1]?.length ?? 0) === block.keyIndent) return index;
  }
  return -1;
}

/** The lines of a key's value: its own line and the deeper ones after it. */
function valueEnd(lines: string[], block: RuleBlock, from: number): number {
  let end = from + 1;
  while (end < block.end) {
    const line = lines[end] as string;
    if (line.trim() && indentOf(line) <= block.keyIndent) break;
    end += 1;
  }
  return end;
}

export function editRule(text: string, alertname: string, fix: RuleFix): RuleEdit {
  const lines = text.split("\n");
  const block = findRule(lines, alertname);
  if (!block) return { text: null, reason: `no rule named ${alertname}` };
  const expr = keyLine(lines, block, "expr");
  if (expr < 0) return { text: null, reason: `the rule ${alertname} has no expr` };
  const exprEnd = valueEnd(lines, block, expr);

  if (fix.kind === "raise_threshold") {
    // The comparison is the expression's last one: the last `<op> <number>` worth the threshold.
    const comparison = new RegExp(`(${escapeRegExp(fix.op)}\\s*)(${NUMERAL})(?![\\w.])`, "g");
    for (let index = exprEnd - 1; index >= expr; index -= 1) {
      const line = lines[index] as string;
      const hits = [...line.matchAll(comparison)].filter((hit) => Number(hit[2]) === fix.threshold);
      const hit = hits.at(-1);
      if (!hit || hit.index === undefined) continue;
      const at = hit.index + (hit[1]?.length ?? 0);
      lines[index] = `${line.slice(0, at)}${fix.to}${line.slice(at + (hit[2]?.length ?? 0))}`;
      return {
        text: lines.join("\n"),
        summary: `raise the threshold of ${alertname} from ${fix.op} ${fix.threshold} to ${fix.op} ${fix.to}`,
      };
    }
    return { text: null, reason: `the expr of ${alertname} has no comparison ${fix.op} ${fix.threshold}` };
  }

  const wanted = durationSeconds(fix.duration) ?? 0;
  const current = keyLine(lines, block, "for");
  const pad = " ".repeat(block.keyIndent);
  if (current >= 0) {
    const line = lines[current] as string;
    const value = /for:\s*["']?([0-9a-z]+)["']?/.exec(line)?.[1] ?? "";
    const seconds = durationSeconds(value);
    if (seconds !== null && seconds >= wanted) {
      return {
        text: null,
        reason: `${alertname} already waits for: ${value}; a longer wait is a judgement call`,
      };
    }
    lines[current] = line.replace(/(for:\s*)["']?[0-9a-z]*["']?/, `$1${fix.duration}`);
    return {
      text: lines.join("\n"),
      summary: `make ${alertname} wait for: ${fix.duration} (was ${value || "unset"}) before firing`,
    };
  }
  lines.splice(exprEnd, 0, `${pad}for: ${fix.duration}`);
  return { text: lines.join("\n"), summary: `make ${alertname} wait for: ${fix.duration} before firing` };
}
