import { describe, expect, it } from "vitest";
import { buildLinks, encodeUrlPart, normalizeLinkUrl } from "./links.ts";

describe("normalizeLinkUrl", () => {
  it("keeps absolute http and https URLs as written", () => {
    expect(normalizeLinkUrl("https://runbooks.example.com/a%20b?x=1#y")).toBe(
      "https://runbooks.example.com/a%20b?x=1#y",
    );
    expect(normalizeLinkUrl(" http://ops1:9093 ")).toBe("http://ops1:9093");
    expect(normalizeLinkUrl("HTTPS://EXAMPLE.com/")).toBe("HTTPS://EXAMPLE.com/");
  });

  it("keeps percent-encoded braces (PromQL in generatorURL)", () => {
    const url = "http://prom:9090/graph?g0.expr=up%7Bjob%3D%22x%22%7D";
    expect(normalizeLinkUrl(url)).toBe(url);
  });

  it("drops other schemes and non-URLs", () => {
    expect(normalizeLinkUrl("javascript:alert(1)")).toBeNull();
    expect(normalizeLinkUrl("mailto:ops@example.com")).toBeNull();
    expect(normalizeLinkUrl("ftp://example.com/x")).toBeNull();
    expect(normalizeLinkUrl("localhost:9090/graph")).toBeNull();
    expect(normalizeLinkUrl("http://")).toBeNull();
  });

  it("drops non-strings and empty values", () => {
    expect(normalizeLinkUrl(undefined)).toBeNull();
    expect(normalizeLinkUrl(null)).toBeNull();
    expect(normalizeLinkUrl(42)).toBeNull();
    expect(normalizeLinkUrl({ href: "https://x" })).toBeNull();
    expect(normalizeLinkUrl("")).toBeNull();
    expect(normalizeLinkUrl("  ")).toBeNull();
  });

  it("resolves a relative URL against an absolute base", () => {
    expect(normalizeLinkUrl("?orgId=1", "http://grafana.example.com/")).toBe(
      "http://grafana.example.com/?orgId=1",
    );
    expect(normalizeLinkUrl("/d/abc", "https://grafana.example.com/sub/")).toBe(
      "https://grafana.example.com/d/abc",
    );
    expect(normalizeLinkUrl("d/abc", "https://grafana.example.com/sub/")).toBe(
      "https://grafana.example.com/sub/d/abc",
    );
    expect(normalizeLinkUrl("//cdn.example.com/i.png", "https://grafana.example.com/")).toBe(
      "https://cdn.example.com/i.png",
    );
  });

  it("drops a relative URL without a usable base", () => {
    expect(normalizeLinkUrl("?orgId=1")).toBeNull();
    expect(normalizeLinkUrl("/d/abc", "")).toBeNull();
    expect(normalizeLinkUrl("/d/abc", "grafana.example.com")).toBeNull();
    expect(normalizeLinkUrl("/d/abc", "ftp://files.example.com/")).toBeNull();
    expect(normalizeLinkUrl("/d/abc", "http://{HOST}/")).toBeNull();
  });

  it("drops values with unexpanded macros or placeholders", () => {
    expect(normalizeLinkUrl("https://dt.example.com/#problems/problemdetails;pid={PID}")).toBeNull();
    expect(normalizeLinkUrl("https://{$ZABBIX.URL}/tr_events.php")).toBeNull();
    expect(normalizeLinkUrl("$LINK")).toBeNull();
    expect(normalizeLinkUrl("https://app.datadoghq.com/monitors/$ALERT_ID")).toBeNull();
    expect(normalizeLinkUrl("{{context.alertDetailsUrl}}")).toBeNull();
    expect(normalizeLinkUrl("/x/{id}", "https://example.com/")).toBeNull();
  });

  it("keeps lower-case dollar words, which are not macros", () => {
    expect(normalizeLinkUrl("https://api.example.com/items?$filter=a")).toBe(
      "https://api.example.com/items?$filter=a",
    );
  });
});

describe("buildLinks", () => {
  it("takes the first usable URL of each candidate, in candidate order", () => {
    expect(
      buildLinks([
        { kind: "source", urls: ["https://s.example.com/1"] },
        {
          kind: "runbook",
          urls: [undefined, "not a url", "https://rb.example.com/2", "https://rb.example.com/3"],
        },
        { kind: "dashboard", urls: [null, ""] },
        { kind: "image", urls: [] },
      ]),
    ).toEqual([
      { kind: "source", url: "https://s.example.com/1" },
      { kind: "runbook", url: "https://rb.example.com/2" },
    ]);
  });

  it("keeps several links of one kind, but a repeated (kind, url) pair once", () => {
    expect(
      buildLinks([
        { kind: "dashboard", urls: ["https://g.example.com/d/1"] },
        { kind: "dashboard", urls: ["https://g.example.com/d/1?viewPanel=2"] },
        { kind: "dashboard", urls: ["https://g.example.com/d/1"] },
        { kind: "source", urls: ["https://g.example.com/d/1"] },
      ]),
    ).toEqual([
      { kind: "dashboard", url: "https://g.example.com/d/1" },
      { kind: "dashboard", url: "https://g.example.com/d/1?viewPanel=2" },
      { kind: "source", url: "https://g.example.com/d/1" },
    ]);
  });

  it("resolves relative URLs against the base URL", () => {
    expect(
      buildLinks([{ kind: "source", urls: ["?orgId=1"] }], { baseUrl: "http://localhost:3000/" }),
    ).toEqual([{ kind: "source", url: "http://localhost:3000/?orgId=1" }]);
  });

  it("gives no links for no candidates", () => {
    expect(buildLinks([])).toEqual([]);
  });
});

describe("encodeUrlPart", () => {
  it("encodes like encodeURIComponent", () => {
    expect(encodeUrlPart("disk full (/var) & more")).toBe(encodeURIComponent("disk full (/var) & more"));
    expect(encodeUrlPart("nul\u0000 and \u{1F525}")).toBe("nul%00%20and%20%F0%9F%94%A5");
  });

  it("encodes an unpaired surrogate as U+FFFD instead of throwing", () => {
    expect(() => encodeURIComponent("a\ud800")).toThrow(URIError);
    expect(encodeUrlPart("a\ud800b\udfff")).toBe("a%EF%BF%BDb%EF%BF%BD");
  });
});
