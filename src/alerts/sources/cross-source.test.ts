// Every source's fixtures posted to every other source's parser: a body another source sent is a
// parse error naming what it is, never alerts of the wrong source (alert-sources.md 1.1). Alertmanager
// and Grafana read each other's notifications: Grafana's webhook is Alertmanager's format.
import { describe, expect, it } from "vitest";
import { fixtureFiles, readFixture } from "../../../test/fixtures.ts";
import { PARSERS } from "./index.ts";
import { SOURCE_TYPES, type SourceType } from "./types.ts";

const FAMILY = new Set<SourceType>(["alertmanager", "grafana"]);
const sameFamily = (a: SourceType, b: SourceType) => a === b || (FAMILY.has(a) && FAMILY.has(b));

describe("a body of another source", () => {
  for (const receiver of SOURCE_TYPES) {
    it(`is not read as ${receiver} alerts`, () => {
      const misread: string[] = [];
      for (const sender of SOURCE_TYPES.filter((source) => !sameFamily(source, receiver))) {
        for (const file of fixtureFiles(sender)) {
          const result = PARSERS[receiver]({
            body: readFixture(sender, file),
            headers: { "content-type": "application/json" },
            options: {},
          });
          if (result.ok && result.events.length > 0) misread.push(`${sender}/${file}`);
        }
      }
      expect(misread).toEqual([]);
    });
  }

  it("names the source that sent it", () => {
    const result = PARSERS.newrelic({
      body: readFixture("datadog", "default-template-triggered-p1.json"),
      headers: {},
      options: {},
    });
    expect(result).toEqual({
      ok: false,
      error:
        "not a newrelic webhook: this is a Datadog webhook (event_type, last_updated); register it with that source",
    });
    const grafana = PARSERS.datadog({
      body: readFixture("grafana", "docs-firing-2-alerts.json"),
      headers: {},
      options: {},
    });
    expect(grafana).toMatchObject({
      ok: false,
      error: expect.stringContaining("Alertmanager or Grafana notification"),
    });
  });
});
