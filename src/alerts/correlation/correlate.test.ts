// Storm rules (correlate.ts, README.md "Storms") as pure units: scopes of real fixtures, layers,
// roles, and planStorms on hand-built sets whose outcome is worked out from the rules.
import { describe, expect, it } from "vitest";
import { parseSharedFixture } from "../../../test/fixtures.ts";
import type { SourceType } from "../sources/index.ts";
import {
  alertLayer,
  assignRoles,
  isStormEligible,
  planStorms,
  type RoleInput,
  type StormAlert,
  stormScopeOf,
  stormsToLoad,
  upstreamHintOf,
} from "./correlate.ts";
import { computeImpact } from "./impact.ts";

function labelsOf(source: SourceType, name: string, index = 0): Record<string, string> {
  const parsed = parseSharedFixture(source, name);
  if (!parsed.ok || !parsed.events[index]) throw new Error(`${source}/${name}: no event ${index}`);
  return parsed.events[index].labels;
}

describe("stormScopeOf", () => {
  it("takes the broadest of cluster, namespace, service, host from real fixtures", () => {
    expect({
      alertmanager: stormScopeOf(labelsOf("alertmanager", "firing-group-3-alerts.json"), "alertmanager"),
      datadog: stormScopeOf(labelsOf("datadog", "keep-template-triggered-k8s-cpu.json"), "datadog"),
      dynatrace: stormScopeOf(labelsOf("dynatrace", "custom-payload-open-service-error.json"), "dynatrace"),
      zabbix: stormScopeOf(labelsOf("zabbix", "keep-script-acknowledged-update.json"), "zabbix"),
      checkmk: stormScopeOf(labelsOf("checkmk", "keep-script-service-problem-critical.json"), "checkmk"),
      cloudwatch: stormScopeOf(labelsOf("cloudwatch", "sns-alarm-cwagent-disk-modern.json"), "cloudwatch"),
      grafana: stormScopeOf(labelsOf("grafana", "legacy-alerting-evalmatches-tags.json"), "grafana"),
      sentry: stormScopeOf(labelsOf("sentry", "legacy-webhook-plugin-keep-mock.json"), "sentry"),
      pagerduty: stormScopeOf(labelsOf("pagerduty", "incident-triggered.json"), "pagerduty"),
    }).toEqual({
      alertmanager: "cluster:prod-us-east-1",
      datadog: "cluster:prod-us1",
      dynatrace: "cluster:prod-eu-west-1",
      zabbix: "host:db-primary-01",
      // Checkmk's service is a check of the host, not a service.
      checkmk: "host:db-primary-01",
      // CloudWatch's namespace (CWAgent) is a metric namespace: the instance is the scope.
      cloudwatch: "host:i-007a83a108d6e2c6e",
      // A service is qualified by its environment: staging's api is not production's.
      grafana: "service:physical@staging",
      sentry: null,
      pagerduty: "service:pig208",
    });
  });

  it("drops a Prometheus instance's port, and has no catch-all for alerts without scope labels", () => {
    expect(stormScopeOf({ instance: "10.0.0.7:9100", job: "node" }, "alertmanager")).toBe("host:10.0.0.7");
    expect(stormScopeOf({ alertname: "BatchJobLate", severity: "warning" }, "alertmanager")).toBeNull();
    expect(stormScopeOf({ env: "production" }, "alertmanager")).toBeNull();
    expect(stormScopeOf({ namespace: "AWS/RDS" }, "cloudwatch")).toBeNull();
    // Splunk's app is where a saved search lives (`search` for most), not a service.
    expect(stormScopeOf(labelsOf("splunk", "docs-webhook-stats-result.json"), "splunk")).toBeNull();
    expect(stormScopeOf({ app: "search", host: "web-01" }, "splunk")).toBe("host:web-01");
    expect(stormScopeOf({ namespace: "payments" }, "alertmanager")).toBe("namespace:payments");
  });

  it("reads the same environment keys as impact, in any spelling", () => {
    expect([
      stormScopeOf({ service: "checkout", deploy_env: "Canary" }, "alertmanager"),
      stormScopeOf({ service: "checkout", tier: "production" }, "alertmanager"),
      stormScopeOf({ "k8s.namespace.name": "payments", "deployment.environment": "prod" }, "datadog"),
      // The first in the vocabulary's order wins: `env` before `tier`.
      stormScopeOf({ app: "web", tier: "frontend", env: "staging" }, "alertmanager"),
    ]).toEqual([
      "service:checkout@canary",
      "service:checkout@production",
      "namespace:payments@prod",
      "service:web@staging",
    ]);
  });

  it("takes a machine, VM or server as a host, and a Checkmk check never as a service", () => {
    expect([
      stormScopeOf({ server: "web-01" }, "zabbix"),
      stormScopeOf({ vm: "vm-7", machine: "m-1" }, "azure-monitor"),
      stormScopeOf({ service: "Filesystem /", host: "db-1" }, "checkmk"),
      stormScopeOf({ service: "Filesystem /" }, "checkmk"),
    ]).toEqual(["host:web-01", "host:m-1", "host:db-1", null]);
  });

  it("reads one labels object by each source's meaning, however often and in whatever order it is asked", () => {
    // The kinds of an alert's labels are worked out once per labels object: what `service` means
    // still depends on the source.
    const labels = { service: "Filesystem /", host: "db-1:9100" };
    expect([
      stormScopeOf(labels, "alertmanager"),
      stormScopeOf(labels, "checkmk"),
      stormScopeOf(labels, "alertmanager"),
      stormScopeOf(labels, "checkmk"),
    ]).toEqual(["service:filesystem /", "host:db-1", "service:filesystem /", "host:db-1"]);
  });

  it("reads labels named like Object.prototype members as ordinary labels", () => {
    const labels = JSON.parse(
      '{"constructor":"a","__proto__":"b","toString":"c","hasOwnProperty":"d","service":"Checkout","env":"__proto__"}',
    );
    expect(stormScopeOf(labels, "alertmanager")).toBe("service:checkout@__proto__");
    expect(stormScopeOf(JSON.parse('{"constructor":"a","__proto__":"b"}'), "alertmanager")).toBeNull();
    expect(stormScopeOf({ host: "constructor", namespace: "toString" }, "alertmanager")).toBe(
      "namespace:tostring",
    );
  });

  it("lets only active, non-test alerts with a scope take part", () => {
    const scoped = { status: "active", isTest: false, stormScope: "host:a" };
    expect([
      isStormEligible(scoped),
      isStormEligible({ ...scoped, isTest: true }),
      isStormEligible({ ...scoped, status: "resolved" }),
      isStormEligible({ ...scoped, status: "ignored" }),
      isStormEligible({ ...scoped, stormScope: null }),
    ]).toEqual([true, false, false, false, false]);
  });
});

describe("alertLayer", () => {
  it("reads infrastructure, data and application from titles and label keys", () => {
    expect({
      node: alertLayer("NodeFilesystemSpaceFillingUp", {}),
      postgres: alertLayer("PostgreSQLDown", {}),
      diskOfDb: alertLayer("Postgres disk full", {}),
      latency: alertLayer("HighRequestLatency", {}),
      errors: alertLayer("checkout 5xx ratio", {}),
      crashLoop: alertLayer("KubePodCrashLooping", {}),
      rdsCpu: alertLayer("CORE - DB - USO CPU", {}),
      byKey: alertLayer("Space low", { mountpoint: "/" }),
      byAlertname: alertLayer("payments degraded", { alertname: "RedisReplicationBroken" }),
      battery: alertLayer("Battery Voltage alert", {}),
    }).toEqual({
      node: "infrastructure",
      postgres: "data",
      diskOfDb: "infrastructure",
      latency: "application",
      errors: "application",
      crashLoop: "application",
      rdsCpu: "infrastructure",
      byKey: "infrastructure",
      byAlertname: "data",
      battery: "unknown",
    });
  });
});

const T0 = Date.parse("2024-05-14T10:00:00.000Z");
const minutes = (n: number) => new Date(T0 + n * 60_000);

function member(id: string, title: string, at: number, labels: Record<string, string> = {}): RoleInput {
  return { id, title, labels, triggeredAt: minutes(at) };
}

describe("assignRoles", () => {
  it("a database alert is the cause of the application alerts, even when it fired later", () => {
    const roles = assignRoles([
      member("a", "HighRequestLatency", 0),
      member("b", "PostgreSQLDown", 2),
      member("c", "HighErrorRate", 1),
    ]);
    expect(Object.fromEntries(roles)).toEqual({
      a: { role: "symptom", likelyUpstream: "PostgreSQLDown" },
      b: { role: "cause", likelyUpstream: null },
      c: { role: "symptom", likelyUpstream: "PostgreSQLDown" },
    });
  });

  it("within one layer, the earliest is the cause", () => {
    const roles = assignRoles([member("a", "HighErrorRate", 3), member("b", "HighRequestLatency", 1)]);
    expect(Object.fromEntries(roles)).toEqual({
      a: { role: "symptom", likelyUpstream: "HighRequestLatency" },
      b: { role: "cause", likelyUpstream: null },
    });
  });

  it("an info alert that fired first is not the cause of an actionable one; among info alerts alone it may be", () => {
    const info = { ...member("a", "CheckoutInfoNoise", 0), displayPriority: 5 };
    const critical = { ...member("b", "TargetDown", 1), displayPriority: 1 };
    expect(Object.fromEntries(assignRoles([info, critical]))).toEqual({
      a: { role: "unknown", likelyUpstream: null },
      b: { role: "unknown", likelyUpstream: null },
    });
    const warning = { ...member("c", "HighRequestLatency", 2), displayPriority: 3 };
    expect(Object.fromEntries(assignRoles([info, critical, warning]))).toEqual({
      a: { role: "unknown", likelyUpstream: null },
      b: { role: "cause", likelyUpstream: null },
      c: { role: "symptom", likelyUpstream: "TargetDown" },
    });
    const laterInfo = { ...member("d", "CheckoutInfoNoise2", 3), displayPriority: 5 };
    expect(Object.fromEntries(assignRoles([info, laterInfo]))).toEqual({
      a: { role: "cause", likelyUpstream: null },
      d: { role: "symptom", likelyUpstream: "CheckoutInfoNoise" },
    });
  });

  it("no evidence, no diagnosis: same layer and same time are all unknown", () => {
    const roles = assignRoles([member("a", "HighErrorRate", 0), member("b", "HighErrorRate", 0)]);
    expect(Object.fromEntries(roles)).toEqual({
      a: { role: "unknown", likelyUpstream: null },
      b: { role: "unknown", likelyUpstream: null },
    });
  });

  it("reads a label key as the same kind as impact does: volume and topic say the layer", () => {
    expect({
      volume: alertLayer("Space low", { volume: "pvc-1" }),
      topic: alertLayer("Lag high", { topic: "orders" }),
      prototypeNamed: alertLayer("Lag high", JSON.parse('{"constructor":"disk","__proto__":"postgres"}')),
    }).toEqual({ volume: "infrastructure", topic: "data", prototypeNamed: "unknown" });
  });

  it("matches dependency labels naming a member by a label named like an Object.prototype member", () => {
    const roles = assignRoles([
      member("web", "HighRequestLatency", 0, JSON.parse('{"service":"web","depends_on":"constructor"}')),
      member(
        "pay",
        "HighErrorRate",
        4,
        JSON.parse('{"service":"constructor","__proto__":"x","toString":"y"}'),
      ),
    ]);
    expect(Object.fromEntries(roles)).toEqual({
      web: { role: "symptom", likelyUpstream: "HighErrorRate" },
      pay: { role: "cause", likelyUpstream: null },
    });
  });

  it("names the upstream by its title alone when no other member has that title", () => {
    const roles = assignRoles([
      member("node", "NodeDown", 0, { instance: "node-1:9100", cluster: "prod" }),
      member("disk", "NodeDiskFull", 1, { instance: "node-1:9100", cluster: "prod" }),
      member("api", "HighErrorRate", 2, { service: "api", cluster: "prod" }),
    ]);
    expect(Object.fromEntries(roles)).toEqual({
      node: { role: "cause", likelyUpstream: null },
      disk: { role: "symptom", likelyUpstream: "NodeDown" },
      api: { role: "symptom", likelyUpstream: "NodeDown" },
    });
  });

  it("names an upstream whose title another member shares by the first label that tells it apart", () => {
    const roles = assignRoles([
      member("one", "NodeDown", 0, { alertname: "NodeDown", instance: "node-1:9100", job: "node" }),
      member("two", "NodeDown", 1, { alertname: "NodeDown", instance: "node-2:9100", job: "node" }),
      member("pod", "KubePodNotReady", 2, { pod: "search-0", depends_on: "node-2" }),
    ]);
    expect(Object.fromEntries(roles)).toEqual({
      one: { role: "cause", likelyUpstream: null },
      two: { role: "symptom", likelyUpstream: "NodeDown (instance=node-1:9100)" },
      pod: { role: "symptom", likelyUpstream: "NodeDown (instance=node-2:9100)" },
    });
  });

  it("names a shared-title upstream by the labels needed, else by its id", () => {
    const up = member("up", "DiskFull", 0, { zone: "b", host: "h1", mount: "/" });
    const sameHost = member("a", "DiskFull", 1, { zone: "b", host: "h1", mount: "/data" });
    const sameMount = member("b", "DiskFull", 1, { zone: "b", host: "h2", mount: "/" });
    expect({
      // host, ranked first, tells it from `b` only; mount, next in code-unit order, from `a` too.
      labels: upstreamHintOf(up, [up, sameHost, sameMount]),
      // host does not tell it from `a`; mount tells it from both.
      single: upstreamHintOf(up, [up, sameHost, member("d", "DiskFull", 1, {})]),
      id: upstreamHintOf(up, [up, { ...up, id: "twin" }]),
      unique: upstreamHintOf(up, [
        up,
        member("e", "DiskAlmostFull", 1, { zone: "b", host: "h1", mount: "/" }),
      ]),
    }).toEqual({
      labels: "DiskFull (host=h1, mount=/)",
      single: "DiskFull (mount=/)",
      id: "DiskFull (id=up)",
      unique: "DiskFull",
    });
  });

  it("a dependency label overrides time and layer", () => {
    const roles = assignRoles([
      member("web", "HighRequestLatency", 0, { service: "web", depends_on: "payments-api" }),
      member("pay", "HighErrorRate", 4, { service: "payments-api" }),
      member("cart", "HighErrorRate", 5, { service: "cart", upstream: "web" }),
    ]);
    expect(Object.fromEntries(roles)).toEqual({
      // cart is a HighErrorRate too: the hint names pay by its service.
      web: { role: "symptom", likelyUpstream: "HighErrorRate (service=payments-api)" },
      pay: { role: "cause", likelyUpstream: null },
      // cart names web: web is its likely upstream.
      cart: { role: "symptom", likelyUpstream: "HighRequestLatency" },
    });
  });

  it("in a cycle of dependency labels, takes the cause among the members others depend on", () => {
    const roles = assignRoles([
      member("a", "HighErrorRate", 3, { service: "a", depends_on: "b" }),
      member("b", "HighErrorRate", 2, { service: "b", depends_on: "a" }),
      // Earliest, but only downstream: nothing depends on c.
      member("c", "HighErrorRate", 0, { service: "c", depends_on: "a" }),
    ]);
    expect(roles.get("b")?.role).toBe("cause");
    expect(roles.get("c")).toEqual({ role: "symptom", likelyUpstream: "HighErrorRate (service=a)" });
  });
});

let ids = 0;
function stormAlert(overrides: Partial<StormAlert> & { at: number }): StormAlert {
  ids += 1;
  const { at, ...rest } = overrides;
  return {
    id: `00000000-0000-4000-8000-${String(ids).padStart(12, "0")}`,
    title: "HighErrorRate",
    labels: { service: "checkout", env: "production" },
    triggeredAt: minutes(at),
    sourceType: "alertmanager",
    stormScope: "service:checkout@production",
    stormId: null,
    alertRole: "unknown",
    likelyUpstream: null,
    impactScore: 70,
    impactExplanation:
      "production environment (env=production) +50; service-wide scope (service=checkout) +20; not in a storm +0.",
    ...rest,
  };
}

const STORM = "11111111-1111-4111-8111-111111111111";
const NEW_STORM = "22222222-2222-4222-8222-222222222222";
const newStormId = () => NEW_STORM;

/** The impact of a checkout alert (production 50 + service 20) in a storm of `size`. */
function checkoutImpact(size: number) {
  const impact = computeImpact({
    labels: { service: "checkout", env: "production" },
    sourceType: "alertmanager",
    stormSize: size,
  });
  return { impactScore: impact.score, impactExplanation: impact.explanation };
}

/** A stored storm of two checkout alerts: PostgreSQLDown the cause at minute 0, a symptom at `at`. */
function storedPair(at: number, upstream = "PostgreSQLDown"): [StormAlert, StormAlert] {
  return [
    stormAlert({ at: 0, title: "PostgreSQLDown", stormId: STORM, alertRole: "cause", ...checkoutImpact(2) }),
    stormAlert({ at, stormId: STORM, alertRole: "symptom", likelyUpstream: upstream, ...checkoutImpact(2) }),
  ];
}

describe("planStorms", () => {
  it("groups two loose alerts of one scope within the window, the earlier as cause", () => {
    const first = stormAlert({ at: 0, title: "HighRequestLatency" });
    const second = stormAlert({ at: 9 });
    expect(planStorms({ alerts: [second, first], newStormId })).toEqual([
      {
        id: first.id,
        stormId: NEW_STORM,
        alertRole: "cause",
        likelyUpstream: null,
        impactScore: 75,
        impactExplanation: checkoutImpact(2).impactExplanation,
      },
      {
        id: second.id,
        stormId: NEW_STORM,
        alertRole: "symptom",
        likelyUpstream: "HighRequestLatency",
        impactScore: 75,
        impactExplanation: checkoutImpact(2).impactExplanation,
      },
    ]);
  });

  it("leaves alerts more than 10 minutes apart, or of different scopes, alone", () => {
    expect(planStorms({ alerts: [stormAlert({ at: 0 }), stormAlert({ at: 11 })], newStormId })).toEqual([]);
    expect(
      planStorms({
        alerts: [stormAlert({ at: 0 }), stormAlert({ at: 1, stormScope: "service:cart@production" })],
        newStormId,
      }),
    ).toEqual([]);
  });

  it("adds a joiner to the existing storm, keeping its id, and updates the fan-out of all", () => {
    const cause = stormAlert({
      at: 0,
      title: "PostgreSQLDown",
      stormId: STORM,
      alertRole: "cause",
      ...checkoutImpact(2),
    });
    const symptom = stormAlert({
      at: 1,
      stormId: STORM,
      alertRole: "symptom",
      likelyUpstream: "PostgreSQLDown",
      ...checkoutImpact(2),
    });
    const joiner = stormAlert({ at: 5 });
    expect(planStorms({ alerts: [cause, symptom, joiner], newStormId })).toEqual([
      { id: cause.id, stormId: STORM, alertRole: "cause", likelyUpstream: null, ...checkoutImpact(3) },
      {
        id: symptom.id,
        stormId: STORM,
        alertRole: "symptom",
        likelyUpstream: "PostgreSQLDown",
        ...checkoutImpact(3),
      },
      {
        id: joiner.id,
        stormId: STORM,
        alertRole: "symptom",
        likelyUpstream: "PostgreSQLDown",
        ...checkoutImpact(3),
      },
    ]);
  });

  it("keeps every member within 10 minutes of every other: a later alert stays out", () => {
    const members = [0, 8].map((at) =>
      stormAlert({ at, stormId: STORM, alertRole: at === 0 ? "cause" : "symptom", ...checkoutImpact(2) }),
    );
    // Two HighErrorRate alerts with the same labels: the hint names the cause by its id.
    for (const item of members.slice(1)) item.likelyUpstream = `HighErrorRate (id=${members[0]?.id})`;
    // 12 minutes after the first member: the storm would span 12 minutes.
    expect(planStorms({ alerts: [...members, stormAlert({ at: 12 })], newStormId })).toEqual([]);
  });

  it("bounds a storm: beyond the last seat, alerts stay out", () => {
    const alerts = [0, 1, 2, 3].map((at) => stormAlert({ at }));
    const changes = planStorms({ alerts, newStormId, maxMembers: 3 });
    expect(changes.map((change) => [change.id, change.stormId])).toEqual(
      alerts.slice(0, 3).map((alert) => [alert.id, NEW_STORM]),
    );
  });

  it("dissolves a storm left with one member", () => {
    const last = stormAlert({
      at: 0,
      stormId: STORM,
      alertRole: "symptom",
      likelyUpstream: "PostgreSQLDown",
      ...checkoutImpact(2),
    });
    expect(planStorms({ alerts: [last], newStormId })).toEqual([
      { id: last.id, stormId: null, alertRole: "unknown", likelyUpstream: null, ...checkoutImpact(0) },
    ]);
  });

  it("lets a joiner keep a storm alive whose other members just left", () => {
    const last = stormAlert({ at: 0, title: "PostgreSQLDown", stormId: STORM, ...checkoutImpact(2) });
    const joiner = stormAlert({ at: 3 });
    expect(planStorms({ alerts: [last, joiner], newStormId })).toEqual([
      { id: last.id, stormId: STORM, alertRole: "cause", likelyUpstream: null, ...checkoutImpact(2) },
      {
        id: joiner.id,
        stormId: STORM,
        alertRole: "symptom",
        likelyUpstream: "PostgreSQLDown",
        ...checkoutImpact(2),
      },
    ]);
  });

  it("scores members whose labels are named like Object.prototype members", () => {
    const labels = JSON.parse(
      '{"service":"checkout","env":"production","constructor":"constructor","__proto__":"__proto__","toString":"x","hasOwnProperty":"y"}',
    );
    const first = stormAlert({ at: 0, title: "PostgreSQLDown", labels });
    const second = stormAlert({ at: 1, labels });
    expect(planStorms({ alerts: [first, second], newStormId })).toEqual([
      { id: first.id, stormId: NEW_STORM, alertRole: "cause", likelyUpstream: null, ...checkoutImpact(2) },
      {
        id: second.id,
        stormId: NEW_STORM,
        alertRole: "symptom",
        likelyUpstream: "PostgreSQLDown",
        ...checkoutImpact(2),
      },
    ]);
  });

  it("changes nothing when the stored fields are already right", () => {
    const cause = stormAlert({
      at: 0,
      title: "PostgreSQLDown",
      stormId: STORM,
      alertRole: "cause",
      ...checkoutImpact(2),
    });
    const symptom = stormAlert({
      at: 1,
      stormId: STORM,
      alertRole: "symptom",
      likelyUpstream: "PostgreSQLDown",
      ...checkoutImpact(2),
    });
    expect(planStorms({ alerts: [cause, symptom], newStormId })).toEqual([]);
  });

  it("with the changed alerts named, recomputes only the storms they are in, were in or that take a joiner", () => {
    // Stored fields that are out of date (the symptom's upstream is wrong): left alone unless the
    // storm changes, because the plan trusts what it wrote before.
    const stale = () => storedPair(1, "Other");
    const none = { alerts: new Set<string>(), storms: new Set<string>() };
    expect(planStorms({ alerts: stale(), newStormId, changed: none })).toEqual([]);
    // Without the names every storm is recomputed, and the stale upstream is corrected.
    expect(planStorms({ alerts: stale(), newStormId }).map((change) => change.likelyUpstream)).toEqual([
      "PostgreSQLDown",
    ]);
    const [cause, symptom] = stale();
    const pendingMember = { alerts: new Set([symptom.id]), storms: new Set([STORM]) };
    expect(
      planStorms({ alerts: [cause, symptom], newStormId, changed: pendingMember }).map((change) => change.id),
    ).toEqual([symptom.id]);
    // A member that left (not given any more) names its storm: the one left dissolves.
    const leftStorm = { alerts: new Set(["gone"]), storms: new Set([STORM]) };
    expect(planStorms({ alerts: [cause], newStormId, changed: leftStorm })).toEqual([
      { id: cause.id, stormId: null, alertRole: "unknown", likelyUpstream: null, ...checkoutImpact(0) },
    ]);
    // A joiner changes the storm's size, so every member is recomputed.
    const joiner = stormAlert({ at: 5 });
    const joined = { alerts: new Set([joiner.id]), storms: new Set<string>() };
    const [c2, s2] = stale();
    expect(
      planStorms({ alerts: [c2, s2, joiner], newStormId, changed: joined }).map((change) => [
        change.id,
        change.likelyUpstream,
        change.impactScore,
      ]),
    ).toEqual([
      [c2.id, null, checkoutImpact(3).impactScore],
      [s2.id, "PostgreSQLDown", checkoutImpact(3).impactScore],
      [joiner.id, "PostgreSQLDown", checkoutImpact(3).impactScore],
    ]);
  });

  it("places joiners by a storm's summary, and asks for its members only when one joins", () => {
    const scope = "service:checkout@production";
    // A storm of 2 from minute 0 to 4, given by its summary.
    const summary = { id: STORM, scope, size: 2, first: minutes(0), last: minutes(4) };
    const near = stormAlert({ at: 9 });
    expect(stormsToLoad({ alerts: [near], summaries: [summary] })).toEqual([STORM]);
    expect(() => planStorms({ alerts: [near], summaries: [summary], newStormId })).toThrow(/members/);
    // 11 minutes after the first member: the storm would span 11 minutes. Alone, it stays loose.
    const late = stormAlert({ at: 11 });
    expect(stormsToLoad({ alerts: [late], summaries: [summary] })).toEqual([]);
    expect(planStorms({ alerts: [late], summaries: [summary], newStormId })).toEqual([]);
    // A full storm near two loose alerts keeps them out of storms; one with a seat left takes the first.
    const two = () => [stormAlert({ at: 5 }), stormAlert({ at: 6 })];
    const full = { ...summary, size: 3 };
    expect(planStorms({ alerts: two(), summaries: [full], maxMembers: 3, newStormId })).toEqual([]);
    expect(stormsToLoad({ alerts: two(), summaries: [summary], maxMembers: 3 })).toEqual([STORM]);
    // Given the members instead, the same joiner is placed and every member recomputed.
    const members = storedPair(4);
    const joiner = stormAlert({ at: 9 });
    expect(
      planStorms({ alerts: [...members, joiner], newStormId }).map((change) => [change.id, change.stormId]),
    ).toEqual([...members, joiner].map((alert) => [alert.id, STORM]));
  });
});
