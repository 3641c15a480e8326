import { describe, expect, it } from "vitest";
import { createLabelBuilder, finalizeLabels, labelValueText, splitTag, splitTagList } from "./labels.ts";

describe("labelValueText", () => {
  it("keeps strings and renders other values as JSON text", () => {
    expect(labelValueText("prod")).toBe("prod");
    expect(labelValueText("")).toBe("");
    expect(labelValueText(5)).toBe("5");
    expect(labelValueText(true)).toBe("true");
    expect(labelValueText(["a", 1])).toBe('["a",1]');
    expect(labelValueText({ b: null })).toBe('{"b":null}');
  });

  it("skips null and absent values", () => {
    expect(labelValueText(null)).toBeNull();
    expect(labelValueText(undefined)).toBeNull();
  });
});

describe("splitTag", () => {
  it("splits at the first : or =, whichever comes first, trimming both sides", () => {
    expect(splitTag("env:prod")).toEqual(["env", "prod"]);
    expect(splitTag("team=payments")).toEqual(["team", "payments"]);
    expect(splitTag(" env : prod ")).toEqual(["env", "prod"]);
    expect(splitTag("url:http://x=1")).toEqual(["url", "http://x=1"]);
    expect(splitTag("a=b:c")).toEqual(["a", "b:c"]);
  });

  it("gives an empty value to a bare tag", () => {
    expect(splitTag("monitor")).toEqual(["monitor", ""]);
    expect(splitTag(" vip ")).toEqual(["vip", ""]);
  });

  it("keeps empty sides empty", () => {
    expect(splitTag(":prod")).toEqual(["", "prod"]);
    expect(splitTag("env:")).toEqual(["env", ""]);
  });
});

describe("splitTagList", () => {
  it("splits comma text and drops empty items", () => {
    expect(splitTagList("env:prod, team:payments,,monitor ")).toEqual([
      "env:prod",
      "team:payments",
      "monitor",
    ]);
  });

  it("reads arrays, rendering non-strings and skipping nulls", () => {
    expect(splitTagList([" env:prod", null, 5, ""])).toEqual(["env:prod", "5"]);
  });

  it("gives nothing for other values", () => {
    expect(splitTagList(undefined)).toEqual([]);
    expect(splitTagList({ env: "prod" })).toEqual([]);
    expect(splitTagList(7)).toEqual([]);
  });
});

describe("createLabelBuilder", () => {
  it("flattens values, skips nulls, trims keys and drops empty keys", () => {
    const labels = createLabelBuilder()
      .addAll({ " env ": "prod", count: 3, on: false, nested: { a: 1 }, gone: null, "": "x", "  ": "y" })
      .toRecord();
    expect(labels).toEqual({ env: "prod", count: "3", on: "false", nested: '{"a":1}' });
  });

  it("does not trim values", () => {
    expect(createLabelBuilder().add("k", " v ").toRecord()).toEqual({ k: " v " });
  });

  it("joins the distinct values of a repeated key in order of appearance", () => {
    const labels = createLabelBuilder().addTags(["team:a", "team:b", "team:a", "team=c"]).toRecord();
    expect(labels).toEqual({ team: "a,b,c" });
  });

  it("joins an empty value like any other", () => {
    expect(createLabelBuilder().addTags("vip, vip, vip:gold").toRecord()).toEqual({ vip: ",gold" });
  });

  it("adds tag strings from comma text or arrays", () => {
    expect(createLabelBuilder().addTags("env:prod,team=payments,monitor").toRecord()).toEqual({
      env: "prod",
      team: "payments",
      monitor: "",
    });
  });

  it("always strips vigil_ keys, and the source's prefixes and keys", () => {
    const builder = createLabelBuilder({ stripPrefixes: ["__"], stripKeys: ["grafana_folder"] });
    builder.addAll({
      __name__: "up",
      __alert_rule_uid__: "x",
      _single: "kept",
      grafana_folder: "Infra",
      grafana_folder_x: "kept",
      vigil_test: "true",
      " vigil_no_data": "true",
      alertname: "Up",
    });
    builder.set("vigil_flapping", "true").addTags("vigil_x:1");
    expect(builder.toRecord()).toEqual({ _single: "kept", grafana_folder_x: "kept", alertname: "Up" });
  });

  it("set replaces, setIfAbsent only fills", () => {
    const labels = createLabelBuilder()
      .addTags("env:prod,env:dev,host:a")
      .set("env", "staging")
      .setIfAbsent("host", "b")
      .setIfAbsent("region", "eu")
      .set("ignored", null)
      .toRecord();
    expect(labels).toEqual({ env: "staging", host: "a", region: "eu" });
  });

  it("has() looks at trimmed keys", () => {
    const builder = createLabelBuilder().add(" host ", "a");
    expect(builder.has("host")).toBe(true);
    expect(builder.has(" host")).toBe(true);
    expect(builder.has("other")).toBe(false);
  });

  it("ignores addAll of a non-object", () => {
    expect(createLabelBuilder().addAll(["a"]).addAll("x").addAll(null).toRecord()).toEqual({});
  });

  it("keeps a __proto__ key as an ordinary label", () => {
    const labels = createLabelBuilder().addAll(JSON.parse('{"__proto__": "x"}')).toRecord();
    expect(Object.entries(labels)).toEqual([["__proto__", "x"]]);
  });

  it("keeps tags and keys named like Object.prototype members, and has() sees only them", () => {
    const builder = createLabelBuilder()
      .addTags(["constructor", "toString:prod", "__proto__:constructor"])
      .add("hasOwnProperty", "x")
      .setIfAbsent("valueOf", "y");
    expect(Object.entries(builder.toRecord())).toEqual([
      ["constructor", ""],
      ["toString", "prod"],
      ["__proto__", "constructor"],
      ["hasOwnProperty", "x"],
      ["valueOf", "y"],
    ]);
    expect([builder.has("constructor"), builder.has("isPrototypeOf")]).toEqual([true, false]);
  });
});

describe("finalizeLabels", () => {
  it("puts the flags first with value true, then the labels in key order", () => {
    const labels = finalizeLabels({ zone: "a", app: "b" }, ["vigil_no_data", "vigil_test"]);
    expect(labels).toEqual({ vigil_test: "true", vigil_no_data: "true", app: "b", zone: "a" });
    expect(Object.keys(labels)).toEqual(["vigil_test", "vigil_no_data", "app", "zone"]);
  });

  it("drops vigil_ keys that are not flags, and empty keys", () => {
    expect(finalizeLabels({ vigil_test: "false", "": "x", a: "1" })).toEqual({ a: "1" });
  });

  it("drops keys longer than 128 characters and cuts values to 1,024", () => {
    const labels = finalizeLabels({
      ["k".repeat(128)]: "ok",
      ["k".repeat(129)]: "dropped",
      long: "v".repeat(1500),
    });
    expect(labels).toEqual({ ["k".repeat(128)]: "ok", long: "v".repeat(1024) });
  });

  it("counts characters, not UTF-16 units, and never splits a surrogate pair", () => {
    const emojiKey = "\u{1F600}".repeat(128);
    const labels = finalizeLabels({ [emojiKey]: `${"a".repeat(1023)}\u{1F600}\u{1F600}` });
    expect(labels).toEqual({ [emojiKey]: `${"a".repeat(1023)}\u{1F600}` });
  });

  it("keeps at most 100 labels: the flags, then the first in key order", () => {
    const many = Object.fromEntries(
      Array.from({ length: 150 }, (_, index) => [`k${String(index).padStart(3, "0")}`, "v"]),
    );
    const labels = finalizeLabels(many, ["vigil_flapping", "vigil_test"]);
    const keys = Object.keys(labels);
    expect(keys).toHaveLength(100);
    expect(keys.slice(0, 3)).toEqual(["vigil_test", "vigil_flapping", "k000"]);
    expect(keys.at(-1)).toBe("k097");
  });

  it("keeps keys and values named like Object.prototype members as ordinary labels", () => {
    const labels = finalizeLabels(
      JSON.parse(
        '{"toString":"__proto__","constructor":"constructor","hasOwnProperty":"","__proto__":"toString","valueOf":"x"}',
      ),
    );
    expect(Object.entries(labels)).toEqual([
      ["__proto__", "toString"],
      ["constructor", "constructor"],
      ["hasOwnProperty", ""],
      ["toString", "__proto__"],
      ["valueOf", "x"],
    ]);
    expect(Object.getPrototypeOf(labels)).toBe(Object.prototype);
  });

  it("sets each flag once", () => {
    expect(finalizeLabels({}, ["vigil_test", "vigil_test"])).toEqual({ vigil_test: "true" });
  });
});
