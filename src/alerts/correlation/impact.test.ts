// The impact formula (impact.ts, README.md "Impact") on real fixtures, parsed by the real parsers.
// Every expected score is worked out by hand from the formula: environment + scope + fan-out.
import { describe, expect, it } from "vitest";
import { parseSharedFixture } from "../../../test/fixtures.ts";
import type { AlertEvent, SourceType } from "../sources/index.ts";
import {
  computeImpact,
  DEFAULT_ENVIRONMENT_CRITICALITY,
  environmentCriticality,
  fanOutPoints,
  readEnvironment,
} from "./impact.ts";
import { normalizeLabelKey } from "./label-vocabulary.ts";

/** The events of one fixture, as the source's parser reads them. */
function eventsOf(source: SourceType, name: string): AlertEvent[] {
  const parsed = parseSharedFixture(source, name);
  if (!parsed.ok) throw new Error(`${source}/${name}: ${parsed.error}`);
  return parsed.events;
}

function impactOf(source: SourceType, name: string, stormSize = 0, index = 0) {
  const event = eventsOf(source, name)[index];
  if (!event) throw new Error(`${source}/${name} has no event ${index}`);
  return computeImpact({ labels: event.labels, sourceType: source, stormSize });
}

describe("computeImpact on the fixtures", () => {
  it("Alertmanager KubePodCrashLooping: production 50 + one pod 5, alone", () => {
    // env=production -> 50; the narrowest scope label is a pod (pod and container) -> 5.
    expect(impactOf("alertmanager", "firing-single-critical.json")).toEqual({
      score: 55,
      explanation:
        "production environment (env=production) +50; one pod, container or disk (pod=payments-api-7d9f8b6c5d-x2k4p) +5; not in a storm +0.",
    });
  });

  it("Alertmanager TargetDown: production 50 + one service 20, and 10 more in a storm of 3", () => {
    // cluster, namespace, service and job: the narrowest level is the service; `service` names it.
    expect(impactOf("alertmanager", "firing-v0.34-notification-reason.json")).toEqual({
      score: 70,
      explanation:
        "production environment (env=production) +50; service-wide scope (service=orders-api) +20; not in a storm +0.",
    });
    expect(impactOf("alertmanager", "firing-v0.34-notification-reason.json", 3)).toEqual({
      score: 80,
      explanation:
        "production environment (env=production) +50; service-wide scope (service=orders-api) +20; storm of 3 co-firing alerts +10.",
    });
  });

  it("never reads severity: the info TargetDown outranks the critical KubePodCrashLooping", () => {
    const [targetDown] = eventsOf("alertmanager", "firing-v0.34-notification-reason.json");
    const [crashLoop] = eventsOf("alertmanager", "firing-single-critical.json");
    expect([targetDown?.severity, crashLoop?.severity]).toEqual(["info", "Critical"]);
    expect(impactOf("alertmanager", "firing-v0.34-notification-reason.json").score).toBeGreaterThan(
      impactOf("alertmanager", "firing-single-critical.json").score,
    );
  });

  it("Datadog tags: env:production and a pod_name", () => {
    expect(impactOf("datadog", "keep-template-triggered-k8s-cpu.json")).toEqual({
      score: 55,
      explanation:
        "production environment (env=production) +50; one pod, container or disk (pod_name=checkout-6b7c9d4f8-2lq9m) +5; not in a storm +0.",
    });
  });

  it("Zabbix tags: staging, and a filesystem of a host (narrower than the host)", () => {
    expect(impactOf("zabbix", "keep-script-acknowledged-update.json")).toEqual({
      score: 30,
      explanation:
        "staging environment (environment=staging) +25; one pod, container or disk (filesystem=/var/lib/docker) +5; not in a storm +0.",
    });
    // The CPU problem of a production host has no narrower label: the host.
    expect(impactOf("zabbix", "keep-script-problem-high.json")).toEqual({
      score: 60,
      explanation:
        "production environment (environment=production) +50; one host or resource (host=k8s-node-07.prod) +10; not in a storm +0.",
    });
  });

  it("Dynatrace: an upper-case Environment value, and a bare `production` tag", () => {
    // Environment=PROD -> prod -> high; k8s-namespace (service level) is narrower than k8s-cluster.
    expect(impactOf("dynatrace", "custom-payload-open-service-error.json")).toEqual({
      score: 70,
      explanation:
        "prod environment (Environment=PROD) +50; service-wide scope (k8s-namespace=checkout) +20; not in a storm +0.",
    });
    // Tags `critical`, `payment`, `production` with no value, and no scope label.
    expect(impactOf("dynatrace", "default-payload-open-harness-docs.json")).toEqual({
      score: 60,
      explanation:
        "production environment (tag production) +50; scope unknown (no scope label) +10; not in a storm +0.",
    });
  });

  it("GCP: the environment inferred from a cluster named dev", () => {
    expect(impactOf("gcp-monitoring", "v1.2-closed-k8s-container-restart.json")).toEqual({
      score: 10,
      explanation:
        "dev environment, inferred from cluster_name=dev +5; one pod, container or disk (container_name=acrepro-backend) +5; not in a storm +0.",
    });
  });

  it("Grafana legacy tags: environment Staging, service Physical", () => {
    expect(impactOf("grafana", "legacy-alerting-evalmatches-tags.json")).toEqual({
      score: 45,
      explanation:
        "staging environment (environment=Staging) +25; service-wide scope (service=Physical) +20; not in a storm +0.",
    });
  });

  it("CloudWatch: no environment, the disk device is the narrowest scope; the metric namespace is not one", () => {
    expect(impactOf("cloudwatch", "sns-alarm-cwagent-disk-modern.json")).toEqual({
      score: 25,
      explanation:
        "environment unknown (no environment label) +20; one pod, container or disk (device=xvda1) +5; not in a storm +0.",
    });
  });

  it("Checkmk: a service is one check of its host", () => {
    expect(impactOf("checkmk", "keep-script-service-problem-critical.json")).toEqual({
      score: 25,
      explanation:
        "environment unknown (no environment label) +20; one pod, container or disk (service=Filesystem /var/lib/postgresql) +5; not in a storm +0.",
    });
  });

  it("Sentry: production without any scope label", () => {
    expect(impactOf("sentry", "legacy-webhook-plugin-keep-mock.json").score).toBe(50 + 10);
  });

  it("an environment value outside the map is named, and scores the middle value", () => {
    expect(
      computeImpact({ labels: { environment: "perf-lab", host: "h1" }, sourceType: "zabbix", stormSize: 0 }),
    ).toEqual({
      score: 30,
      explanation:
        'environment "perf-lab" is not in the criticality map (environment=perf-lab) +20; one host or resource (host=h1) +10; not in a storm +0.',
    });
  });

  it("adds configured entries to the default map, replacing a default entry of the same name", () => {
    const event = eventsOf("grafana", "legacy-alerting-evalmatches-tags.json")[0];
    if (!event) throw new Error("no event");
    const impact = computeImpact(
      { labels: event.labels, sourceType: "grafana", stormSize: 0 },
      { environmentCriticality: { staging: "high" } },
    );
    expect(impact.score).toBe(50 + 20);
    // The other default entries stay: production is high, dev low.
    const other = (env: string) =>
      computeImpact(
        { labels: { env, host: "h1" }, sourceType: "zabbix", stormSize: 0 },
        { environmentCriticality: { staging: "high", canary: "high" } },
      ).score;
    expect([other("production"), other("dev"), other("canary"), other("perf")]).toEqual([
      50 + 10,
      5 + 10,
      50 + 10,
      20 + 10,
    ]);
  });

  it("caps at 100: a production cluster-wide alert in a storm of 6", () => {
    expect(
      computeImpact({ labels: { env: "prod", cluster: "c1" }, sourceType: "alertmanager", stormSize: 6 }),
    ).toEqual({
      score: 100,
      explanation:
        "prod environment (env=prod) +50; cluster- or region-wide scope (cluster=c1) +30; storm of 5 or more co-firing alerts +20.",
    });
  });
});

// Label keys and values are data: a label named like an Object.prototype member (`constructor`,
// `__proto__`, `toString`, `hasOwnProperty`) is an ordinary label. JSON.parse keeps `__proto__` as an
// own key, as ingest does.
describe("labels named like Object.prototype members", () => {
  const impactOf = (labelsJson: string, sourceType = "alertmanager") =>
    computeImpact({ labels: JSON.parse(labelsJson), sourceType, stormSize: 0 });

  it("are no environment and no scope", () => {
    expect(
      impactOf(
        '{"constructor":"constructor","__proto__":"__proto__","toString":"toString","hasOwnProperty":"x"}',
      ),
    ).toEqual({
      score: 30,
      explanation:
        "environment unknown (no environment label) +20; scope unknown (no scope label) +10; not in a storm +0.",
    });
    // Opsgenie and Datadog bare tags: not named like an environment.
    expect(impactOf('{"constructor":"","__proto__":"","toString":""}', "opsgenie").score).toBe(20 + 10);
  });

  it("as values are environment names outside the map, and scope names like any other", () => {
    expect(impactOf('{"env":"constructor","service":"__proto__"}')).toEqual({
      score: 40,
      explanation:
        'environment "constructor" is not in the criticality map (env=constructor) +20; service-wide scope (service=__proto__) +20; not in a storm +0.',
    });
    expect(impactOf('{"env":"__proto__","host":"toString"}').score).toBe(20 + 10);
    // A cluster name: `constructor` is not an environment word, `prod` is.
    expect(impactOf('{"cluster":"constructor-prod"}')).toEqual({
      score: 80,
      explanation:
        "prod environment, inferred from cluster=constructor-prod +50; cluster- or region-wide scope (cluster=constructor-prod) +30; not in a storm +0.",
    });
    expect(impactOf('{"Constructor":"hasOwnProperty","pod":"p1"}').score).toBe(20 + 5);
  });
});

describe("the environment criticality map", () => {
  it("is the documented default map", () => {
    // README "Impact", spelled out so that a change to the map shows here.
    expect(Object.fromEntries(DEFAULT_ENVIRONMENT_CRITICALITY)).toEqual({
      production: "high",
      prod: "high",
      prd: "high",
      live: "high",
      staging: "medium",
      stage: "medium",
      stg: "medium",
      preprod: "medium",
      "pre-prod": "medium",
      uat: "medium",
      dev: "low",
      development: "low",
      test: "low",
      testing: "low",
      qa: "low",
      sandbox: "low",
      local: "low",
    });
    expect(environmentCriticality()).toBe(DEFAULT_ENVIRONMENT_CRITICALITY);
  });

  it("merges configured entries over the defaults without changing the default map", () => {
    const merged = environmentCriticality({ prod: "low", canary: "high" });
    expect(Object.fromEntries(merged)).toEqual({
      ...Object.fromEntries(DEFAULT_ENVIRONMENT_CRITICALITY),
      prod: "low",
      canary: "high",
    });
    // Only the named entry changes: production is still high.
    expect([merged.get("prod"), merged.get("production")]).toEqual(["low", "high"]);
    expect([
      DEFAULT_ENVIRONMENT_CRITICALITY.get("prod"),
      DEFAULT_ENVIRONMENT_CRITICALITY.get("canary"),
    ]).toEqual(["high", undefined]);
  });

  it("reads a configured entry named like an Object.prototype member as an ordinary name", () => {
    const map = environmentCriticality(Object.fromEntries([["__proto__", "high"]]));
    expect(readEnvironment({ env: "__proto__" }, "alertmanager", map)).toEqual({
      level: "high",
      reason: "__proto__ environment (env=__proto__)",
    });
    expect(readEnvironment({ env: "constructor" }, "alertmanager", map).level).toBe("unknown");
  });
});

describe("impact parts", () => {
  it("fan-out: 5 per other member, at most 20", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 50].map(fanOutPoints)).toEqual([0, 0, 5, 10, 15, 20, 20, 20]);
  });

  it("label keys in one spelling", () => {
    expect(
      [
        "kube_cluster_name",
        "k8s-cluster",
        "cluster_name",
        "InstanceId",
        "DBInstanceIdentifier",
        "deployment.environment",
        "pod_name",
        "aws_region",
        "Environment",
      ].map(normalizeLabelKey),
    ).toEqual([
      "cluster",
      "cluster",
      "cluster",
      "instance",
      "db_instance",
      "deployment_environment",
      "pod",
      "region",
      "environment",
    ]);
  });
});
