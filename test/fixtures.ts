// The alert payload fixtures, test/fixtures/alert-payloads/<source>/*.json (provenance in their README),
// and the tests every parser's suite repeats about them.
import { readdirSync, readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { PARSERS } from "../src/alerts/sources/index.ts";
import type { ParseResult, Parser, SourceType } from "../src/alerts/sources/types.ts";

const ALERT_PAYLOADS = new URL("./fixtures/alert-payloads/", import.meta.url);

/** The URL of one fixture file of a source, or of the source's folder without a file. */
export function fixtureUrl(source: string, file = ""): URL {
  return new URL(`${source}/${file}`, ALERT_PAYLOADS);
}

/** One fixture file's text. */
export function readFixture(source: string, file: string): string {
  return readFileSync(fixtureUrl(source, file), "utf8");
}

/** The names of a source's fixture files (the .json ones), sorted. */
export function fixtureFiles(source: string): string[] {
  return readdirSync(fixtureUrl(source))
    .filter((name) => name.endsWith(".json"))
    .sort();
}

/**
 * A fixture read by its source's parser with the headers the source sends (SNS: text/plain and
 * the Notification message type), without severity overrides.
 */
export function parseSharedFixture(source: SourceType, file: string): ParseResult {
  const headers: Record<string, string> =
    source === "cloudwatch"
      ? { "content-type": "text/plain", "x-amz-sns-message-type": "Notification" }
      : { "content-type": "application/json" };
  return PARSERS[source]({ body: readFixture(source, file), headers, options: { severityOverrides: {} } });
}

/** Fails when a fixture file of the source has no expectation, or an expectation no file. */
export function itHasAnExpectationForEveryFixture(source: string, expected: Record<string, unknown>): void {
  it("has an expectation for every fixture file", () => {
    expect(fixtureFiles(source)).toEqual(Object.keys(expected).sort());
  });
}

/**
 * The bodies a parser refuses before reading them: an empty (or blank) body, when the suite has
 * that case, and bodies that are not JSON, each named.
 */
export function itRejectsUnreadableBodies(
  parse: Parser,
  cases: { empty?: string; notJson: Array<[name: string, body: string]>; headers?: Record<string, string> },
): void {
  const parseBody = (body: string) => parse({ body, headers: cases.headers ?? {}, options: {} });
  const { empty } = cases;

  if (empty !== undefined) {
    it("rejects an empty body", () => {
      expect(parseBody(empty)).toEqual({ ok: false, error: "body is empty" });
    });
  }

  it.each(cases.notJson)("rejects %s as not JSON", (_name, body) => {
    const result = parseBody(body);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(/^body is not JSON: /);
  });
}
