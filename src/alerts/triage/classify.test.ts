import { describe, expect, it } from "vitest";
import { type ClassifyInput, classifyAlert } from "./classify.ts";

const NOW = new Date("2026-11-22T12:00:00Z");
const minutesAgo = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000);

function input(
  overrides: Partial<ClassifyInput["alert"]> = {},
  rest: Partial<ClassifyInput> = {},
): ClassifyInput {
  return {
    alert: {
      id: "a1",
      title: "HighErrorRate",
      severity: "High",
      sourceSeverity: "error",
      labels: { alertname: "HighErrorRate", env: "production" },
      isTest: false,
      refireCount: 0,
      alertRole: "unknown",
      likelyUpstream: null,
      stormId: null,
      impactScore: 70,
      impactExplanation: "production environment, service-wide scope",
      ...overrides,
    },
    environment: { level: "high", reason: "production environment (env=production)" },
    history: [{ kind: "created", at: minutesAgo(10) }],
    bucket: [],
    now: NOW,
    ...rest,
  };
}

describe("classifyAlert (sre_classify_alert_criticality)", () => {
  it("scores severity, environment and storm role", () => {
    // High 2 + production 1 = 3
    expect(classifyAlert(input()).attention).toBe("needs_attention");
    expect(classifyAlert(input()).attentionReason).toBe("High severity, in production");
    // Medium 1 + production 1 = 2
    expect(classifyAlert(input({ severity: "Medium" })).attention).toBe("needs_review");
    // High 2 + development -2 = 0
    const dev = input({}, { environment: { level: "low", reason: "dev environment (env=dev)" } });
    expect(classifyAlert(dev)).toMatchObject({
      attention: "others",
      attentionReason: "High severity, in development",
    });
    // Medium 1 + staging 0 + cause 1 = 2
    const cause = input(
      { severity: "Medium", alertRole: "cause", stormId: "s1" },
      { environment: { level: "medium", reason: "staging" } },
    );
    expect(classifyAlert(cause)).toMatchObject({
      attention: "needs_review",
      attentionReason: "Medium severity, in staging, likely cause of a storm",
    });
    // info -1 + unknown 0 = -1
    expect(
      classifyAlert(input({ severity: "info" }, { environment: { level: "unknown", reason: "?" } }))
        .attention,
    ).toBe("others");
  });

  it("sends symptoms of a storm to their cause", () => {
    const result = classifyAlert(
      input({ severity: "Critical", alertRole: "symptom", stormId: "s1", likelyUpstream: "PostgresDown" }),
    );
    expect(result.attention).toBe("others");
    expect(result.attentionReason).toBe('symptom of a storm: look at "PostgresDown" first');
    expect(result.initialInvestigation).toContain('- check "PostgresDown" first');
    expect(result.initialInvestigation).toContain('- a consequence of "PostgresDown"');
  });

  it("flags flapping from the source's flag or from three re-fires in a day", () => {
    const flagged = classifyAlert(input({ labels: { vigil_flapping: "true" } }));
    expect(flagged).toMatchObject({
      attention: "needs_review",
      attentionReason: "flapping: the source reports it flapping; the rule may need tuning",
    });
    const history = [
      { kind: "created", at: minutesAgo(2000) },
      { kind: "resolved", at: minutesAgo(1000) },
      { kind: "refired", at: minutesAgo(600) },
      { kind: "resolved", at: minutesAgo(500) },
      { kind: "refired", at: minutesAgo(300) },
      { kind: "resolved", at: minutesAgo(200) },
      { kind: "refired", at: minutesAgo(30) },
    ];
    expect(classifyAlert(input({ refireCount: 3 }, { history })).attentionReason).toBe(
      "flapping: re-fired 3 times in 24 h; the rule may need tuning",
    );
    // Re-fires older than a day do not count.
    const old = history.map((event) => ({
      ...event,
      at: new Date(event.at.getTime() - 2 * 24 * 60 * 60_000),
    }));
    expect(classifyAlert(input({ refireCount: 3 }, { history: old })).attention).toBe("needs_attention");
  });

  it("calls quick self-resolving alerts noise, unless they are severe", () => {
    const history = [
      { kind: "created", at: minutesAgo(120) },
      { kind: "resolved", at: minutesAgo(118) },
      { kind: "refired", at: minutesAgo(60) },
      { kind: "resolved", at: minutesAgo(57) },
      { kind: "refired", at: minutesAgo(5) },
    ];
    expect(classifyAlert(input({ severity: "Medium", refireCount: 2 }, { history }))).toMatchObject({
      attention: "false_positive",
      attentionReason: "likely noise: 2 episodes resolved on their own within 5 minutes",
    });
    expect(classifyAlert(input({ severity: "Critical", refireCount: 2 }, { history })).attention).toBe(
      "needs_review",
    );
    // One slow resolve (over 5 minutes) is not noise.
    const slow = [...history];
    slow[3] = { kind: "resolved", at: minutesAgo(50) };
    expect(classifyAlert(input({ severity: "Medium", refireCount: 2 }, { history: slow })).attention).toBe(
      "needs_review",
    );
  });

  it("sends missing-data alerts to review and test notifications to others", () => {
    expect(classifyAlert(input({ labels: { vigil_no_data: "true" } })).attention).toBe("needs_review");
    expect(classifyAlert(input({ isTest: true, severity: "Critical" }))).toMatchObject({
      attention: "others",
      attentionReason: "test notification",
    });
  });

  it("writes a one-line summary and a first investigation with hypotheses, signals and next steps", () => {
    const result = classifyAlert(
      input(
        { title: "DiskAlmostFull", labels: { device: "/dev/sda1" }, refireCount: 1 },
        {
          bucket: [{ id: "b", title: "NodeFilesystemReadOnly", severity: "Critical" }],
          history: [
            { kind: "created", at: minutesAgo(90) },
            { kind: "resolved", at: minutesAgo(60) },
            { kind: "refired", at: minutesAgo(10) },
          ],
        },
      ),
    );
    expect(result.shortSummary).toBe("DiskAlmostFull: needs attention (High severity, in production)");
    expect(result.initialInvestigation).toBe(
      [
        "Hypotheses:",
        "- storage filling up or a volume failing",
        "",
        "Related signals:",
        "- production environment (env=production)",
        "- impact 70: production environment, service-wide scope",
        "- re-fired 1 times (1 in 24 h)",
        "- classified together with 1 alert(s): NodeFilesystemReadOnly (Critical)",
        "",
        "Next steps:",
        "- open the alert's source link or dashboard and confirm the signal",
        "- check recent deploys and configuration changes in its scope",
        "- page the owning team if it is not already handled",
      ].join("\n"),
    );
  });
});
