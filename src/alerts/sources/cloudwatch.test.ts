import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { eventsOf, onlyEventOf } from "../../../test/parse-results.ts";
import { parseCloudwatch, readSnsHandshake } from "./cloudwatch.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

// SNS posts with Content-Type text/plain and repeats Type in x-amz-sns-message-type.
function snsHeaders(type: string): Record<string, string> {
  return { "content-type": "text/plain; charset=UTF-8", "x-amz-sns-message-type": type };
}

function parseFixture(name: string): ParseResult {
  const body = readFixture("cloudwatch", name);
  const type = (JSON.parse(body) as { Type: string }).Type;
  return parseCloudwatch({ body, headers: snsHeaders(type), options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseCloudwatch({ body: JSON.stringify(payload), headers: {}, options });
}

const CONSOLE = "console.aws.amazon.com/cloudwatch/home";

// Expected results below were written by hand from the fixture files and section 7 of
// alert-sources.md, not copied from the parser's output. Hashes (H of 1.2) were computed
// independently with python3 hashlib.
const EXPECTED_BY_FIXTURE: Record<string, ParseResult> = {
  "sns-alarm-s3-bucket-size.json": {
    ok: true,
    events: [
      {
        // H("1234567890", "eu-west-1", "bucketbytesAlarm"): no AlarmArn, region from TopicArn.
        external_uid: "4ee4ca049dc27e2a08b5fe01c8c31935",
        status: "active",
        ignore_reason: null,
        title: "bucketbytesAlarm",
        title_is_fallback: false,
        description:
          "bucket bytes size exceeded\n\nThreshold Crossed: 1 datapoint [1062305.0 (14/02/19 23:53:00)] was greater than or equal to the threshold (0.0).",
        source_severity: "ALARM",
        severity: "High",
        display_priority: 2,
        severity_mapping: "mapped",
        triggered_at: "2019-02-15T23:53:45.093Z",
        resolved_at: null,
        labels: {
          BucketName: "try.alerta.io",
          StorageType: "StandardStorage",
          aws_account_id: "1234567890",
          aws_region: "eu-west-1",
          metric_name: "BucketSizeBytes",
          namespace: "AWS/S3",
        },
        links: [
          {
            kind: "source",
            url: `https://eu-west-1.${CONSOLE}?region=eu-west-1#alarmsV2:alarm/bucketbytesAlarm`,
          },
        ],
        is_test: false,
        source_event: "ALARM",
        unmapped: [],
      },
    ],
  },

  "sns-insufficient-data.json": {
    ok: true,
    events: [
      {
        // H("1234567890", "eu-west-1", "notificationCountAlarm").
        external_uid: "74f89938a0d1597fff0e7ec00fa2bef7",
        status: "active",
        ignore_reason: null,
        title: "notificationCountAlarm",
        title_is_fallback: false,
        description: "number of notifications exceeded\n\nInsufficient Data: 10 datapoints were unknown.",
        source_severity: "INSUFFICIENT_DATA",
        severity: "Low",
        display_priority: 4,
        severity_mapping: "mapped",
        triggered_at: "2019-05-13T08:41:43.548Z",
        resolved_at: null,
        labels: {
          vigil_no_data: "true",
          TopicName: "alerta-test",
          aws_account_id: "1234567890",
          aws_region: "eu-west-1",
          metric_name: "NumberOfNotificationsDelivered",
          namespace: "AWS/SNS",
        },
        links: [
          {
            kind: "source",
            url: `https://eu-west-1.${CONSOLE}?region=eu-west-1#alarmsV2:alarm/notificationCountAlarm`,
          },
        ],
        is_test: false,
        source_event: "INSUFFICIENT_DATA",
        unmapped: [],
      },
    ],
  },

  "sns-alarm-cwagent-disk-modern.json": {
    ok: true,
    events: [
      {
        // H("528104389666", "ap-southeast-1", "node_disk_used(i-007a83a108d6e2c6e)").
        external_uid: "41781cb39dfabd9834be9b2d23b0a015",
        status: "active",
        ignore_reason: null,
        title: "node_disk_used(i-007a83a108d6e2c6e)",
        title_is_fallback: false,
        // AlarmDescription is null.
        description:
          "Threshold Crossed: 1 out of the last 1 datapoints [66.66201000304783 (09/09/24 01:54:00)] was greater than the threshold (30.0) (minimum 1 datapoint for OK -> ALARM transition).",
        source_severity: "ALARM",
        severity: "High",
        display_priority: 2,
        severity_mapping: "mapped",
        triggered_at: "2024-09-09T01:59:07.423Z",
        resolved_at: null,
        labels: {
          InstanceId: "i-007a83a108d6e2c6e",
          aws_account_id: "528104389666",
          aws_region: "ap-southeast-1",
          device: "xvda1",
          fstype: "xfs",
          metric_name: "disk_used_percent",
          namespace: "CWAgent",
          path: "/",
        },
        links: [
          {
            kind: "source",
            // encodeURIComponent leaves parentheses as they are.
            url: `https://ap-southeast-1.${CONSOLE}?region=ap-southeast-1#alarmsV2:alarm/node_disk_used(i-007a83a108d6e2c6e)`,
          },
        ],
        is_test: false,
        source_event: "ALARM",
        unmapped: [],
      },
    ],
  },

  "sns-ok-rds-cpu-resolved.json": {
    ok: true,
    events: [
      {
        // H("622547859380", "sa-east-1", "CORE - DB - USO CPU").
        external_uid: "f93ace4ecbc6157eeeb88dd20363d3fc",
        status: "resolved",
        ignore_reason: null,
        title: "CORE - DB - USO CPU",
        title_is_fallback: false,
        description:
          "RDS CPU above 20% on production database\n\nThreshold Crossed: 1 out of the last 1 datapoints [12.43 (05/03/24 20:45:00)] was not greater than the threshold (20.0) (minimum 1 datapoint for ALARM -> OK transition).",
        source_severity: "OK",
        severity: "info",
        display_priority: 5,
        severity_mapping: "mapped",
        triggered_at: null,
        resolved_at: "2024-03-05T20:51:04.488Z",
        labels: {
          DBInstanceIdentifier: "wehandle",
          aws_account_id: "622547859380",
          aws_region: "sa-east-1",
          metric_name: "CPUUtilization",
          namespace: "AWS/RDS",
        },
        links: [
          {
            kind: "source",
            url: `https://sa-east-1.${CONSOLE}?region=sa-east-1#alarmsV2:alarm/CORE%20-%20DB%20-%20USO%20CPU`,
          },
        ],
        is_test: false,
        source_event: "OK",
        unmapped: [],
      },
    ],
  },

  "sns-subscription-confirmation.json": {
    ok: true,
    events: [],
    note: "SNS SubscriptionConfirmation for arn:aws:sns:eu-west-1:1234567890:alerta-test: a subscription handshake, not an alarm",
  },
};

describe("parseCloudwatch: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("cloudwatch", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    expect(parseFixture(name)).toEqual(expected);
  });
});

// --- Variants no fixture shows -------------------------------------------------------------------

const TOPIC_ARN = "arn:aws:sns:us-west-1:111122223333:ops-us-west-1";

function envelope(message: unknown, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Type: "Notification",
    MessageId: "3a6a339c-60fc-5718-875e-66cf50fbf89a",
    TopicArn: TOPIC_ARN,
    Subject: "ALARM",
    Message: typeof message === "string" ? message : JSON.stringify(message),
    Timestamp: "2023-09-08T15:47:04.720Z",
    SignatureVersion: "1",
    Signature: "c2lnbmF0dXJl",
    SigningCertURL: "https://sns.us-west-1.amazonaws.com/SimpleNotificationService-0000.pem",
    UnsubscribeURL: "https://sns.us-west-1.amazonaws.com/?Action=Unsubscribe",
    ...overrides,
  };
}

// A metric-math (anomaly detection) alarm: Trigger.Metrics[], no top-level MetricName.
function metricMathAlarm(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    AlarmName: "RDS Prod - CPU Util",
    AlarmDescription: null,
    AWSAccountId: "111122223333",
    NewStateValue: "ALARM",
    NewStateReason:
      "Thresholds Crossed: 3 out of the last 3 datapoints were greater than the upper thresholds.",
    StateChangeTime: "2023-09-08T15:47:04.677+0000",
    Region: "US West (N. California)",
    AlarmArn: "arn:aws:cloudwatch:us-west-1:111122223333:alarm:RDS Prod - CPU Util",
    OldStateValue: "OK",
    Trigger: {
      Period: 300,
      EvaluationPeriods: 3,
      ComparisonOperator: "GreaterThanUpperThreshold",
      ThresholdMetricId: "ad1",
      Metrics: [
        {
          Id: "m1",
          MetricStat: {
            Metric: {
              Dimensions: [{ value: "orders-prod", name: "DBInstanceIdentifier" }],
              MetricName: "CPUUtilization",
              Namespace: "AWS/RDS",
            },
            Period: 300,
            Stat: "Average",
          },
          ReturnData: true,
        },
        { Expression: "ANOMALY_DETECTION_BAND(m1, 2)", Id: "ad1", Label: "CPU (expected)", ReturnData: true },
      ],
    },
    ...overrides,
  };
}

// A 2012-era alarm: no AlarmArn, no StatisticType, dimensions as {name, value}.
function legacyAlarm(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    AlarmName: "awsec2-i-f4b22853-CPU-Utilization",
    AlarmDescription: "Created from EC2 Console",
    AWSAccountId: "111122223333",
    NewStateValue: "ALARM",
    NewStateReason:
      "Threshold Crossed: 1 datapoint (42.73) was greater than or equal to the threshold (10.0).",
    StateChangeTime: "2012-06-09T09:48:35.237+0000",
    Region: "US West - N. California",
    OldStateValue: "OK",
    Trigger: {
      MetricName: "CPUUtilization",
      Namespace: "AWS/EC2",
      Statistic: "AVERAGE",
      Unit: null,
      Dimensions: [{ name: "InstanceId", value: "i-f4b22853" }],
      Period: 300,
      EvaluationPeriods: 1,
      ComparisonOperator: "GreaterThanOrEqualToThreshold",
      Threshold: 10.0,
    },
    ...overrides,
  };
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

describe("parseCloudwatch: documented variants", () => {
  it("reads a metric-math alarm from Trigger.Metrics[]", () => {
    expect(onlyEvent(envelope(metricMathAlarm()))).toEqual({
      // H("111122223333", "us-west-1", "RDS Prod - CPU Util").
      external_uid: "68f35df4990f136c6046d05d3da0e604",
      status: "active",
      ignore_reason: null,
      title: "RDS Prod - CPU Util",
      title_is_fallback: false,
      description:
        "Thresholds Crossed: 3 out of the last 3 datapoints were greater than the upper thresholds.",
      source_severity: "ALARM",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2023-09-08T15:47:04.677Z",
      resolved_at: null,
      labels: {
        DBInstanceIdentifier: "orders-prod",
        aws_account_id: "111122223333",
        aws_region: "us-west-1",
        metric_name: "CPUUtilization",
        namespace: "AWS/RDS",
      },
      links: [
        {
          kind: "source",
          url: `https://us-west-1.${CONSOLE}?region=us-west-1#alarmsV2:alarm/RDS%20Prod%20-%20CPU%20Util`,
        },
      ],
      is_test: false,
      source_event: "ALARM",
      unmapped: [],
    });
  });

  it("joins the distinct namespaces and metric names of several MetricStat metrics", () => {
    const metric = (name: string) => ({
      Id: name.toLowerCase(),
      MetricStat: {
        Metric: {
          Namespace: "AWS/Lambda",
          MetricName: name,
          Dimensions: [{ name: "FunctionName", value: "checkout" }],
        },
        Period: 60,
        Stat: "Sum",
      },
      ReturnData: false,
    });
    const alarm = metricMathAlarm({
      Trigger: {
        Metrics: [
          metric("Errors"),
          metric("Invocations"),
          { Id: "rate", Expression: "100*errors/invocations", Label: "ErrorRate", ReturnData: true },
        ],
      },
    });
    expect(onlyEvent(envelope(alarm)).labels).toEqual({
      FunctionName: "checkout",
      aws_account_id: "111122223333",
      aws_region: "us-west-1",
      metric_name: "Errors,Invocations",
      namespace: "AWS/Lambda",
    });
  });

  it("reads a 2012-era alarm, taking the region from the TopicArn", () => {
    expect(onlyEvent(envelope(legacyAlarm()))).toEqual({
      // H("111122223333", "us-west-1", "awsec2-i-f4b22853-CPU-Utilization").
      external_uid: "7306a0c6876031810069b7540c36e470",
      status: "active",
      ignore_reason: null,
      title: "awsec2-i-f4b22853-CPU-Utilization",
      title_is_fallback: false,
      description:
        "Created from EC2 Console\n\nThreshold Crossed: 1 datapoint (42.73) was greater than or equal to the threshold (10.0).",
      source_severity: "ALARM",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2012-06-09T09:48:35.237Z",
      resolved_at: null,
      labels: {
        InstanceId: "i-f4b22853",
        aws_account_id: "111122223333",
        aws_region: "us-west-1",
        metric_name: "CPUUtilization",
        namespace: "AWS/EC2",
      },
      links: [
        {
          kind: "source",
          url: `https://us-west-1.${CONSOLE}?region=us-west-1#alarmsV2:alarm/awsec2-i-f4b22853-CPU-Utilization`,
        },
      ],
      is_test: false,
      source_event: "ALARM",
      unmapped: [],
    });
  });

  it("gives old and new payloads of one alarm the same uid", () => {
    const old = onlyEvent(envelope(legacyAlarm()));
    const modern = onlyEvent(
      envelope(
        legacyAlarm({
          AlarmArn: "arn:aws:cloudwatch:us-west-1:111122223333:alarm:awsec2-i-f4b22853-CPU-Utilization",
        }),
        { TopicArn: "arn:aws:sns:us-west-1:111122223333:another-topic" },
      ),
    );
    expect(modern.external_uid).toBe(old.external_uid);
  });

  it("prefers the AlarmArn region over the TopicArn region", () => {
    const event = onlyEvent(
      envelope(metricMathAlarm(), { TopicArn: "arn:aws:sns:eu-west-1:111122223333:elsewhere" }),
    );
    expect(event.external_uid).toBe("68f35df4990f136c6046d05d3da0e604");
    expect(event.labels.aws_region).toBe("us-west-1");
  });

  it("reads a raw message delivery (the alarm itself) like the enveloped alarm", () => {
    const raw = parseCloudwatch({
      body: JSON.stringify(metricMathAlarm()),
      headers: snsHeaders("Notification"),
      options: {},
    });
    expect(raw).toEqual({ ok: true, events: [onlyEvent(envelope(metricMathAlarm()))] });
  });

  it("uses Region as written when neither ARN is there, and then makes no console link", () => {
    expect(onlyEvent(legacyAlarm())).toMatchObject({
      // H("111122223333", "US West - N. California", "awsec2-i-f4b22853-CPU-Utilization").
      external_uid: "7fc76e6b8fac84754ca5d21c8cb88c7b",
      labels: { aws_region: "US West - N. California" },
      links: [],
    });
  });

  it("lets a dimension keep a key that the section's own labels would take", () => {
    const alarm = legacyAlarm({
      Trigger: {
        MetricName: "QueueDepth",
        Namespace: "Custom/Jobs",
        Dimensions: [
          { name: "namespace", value: "jobs-prod" },
          { name: "aws_region", value: "onprem-1" },
        ],
      },
    });
    expect(onlyEvent(envelope(alarm)).labels).toEqual({
      aws_account_id: "111122223333",
      aws_region: "onprem-1",
      metric_name: "QueueDepth",
      namespace: "jobs-prod",
    });
  });

  it("makes an unknown state unchanged, unmapped, without times", () => {
    expect(onlyEvent(envelope(legacyAlarm({ NewStateValue: "PENDING" })))).toMatchObject({
      status: "unchanged",
      source_event: "PENDING",
      source_severity: "PENDING",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "unmapped",
      triggered_at: null,
      resolved_at: null,
      unmapped: [
        { field: "status", value: "PENDING" },
        { field: "severity", value: "PENDING" },
      ],
    });
  });

  it("does not read the generic table for a state value", () => {
    expect(onlyEvent(envelope(legacyAlarm({ NewStateValue: "warning" })))).toMatchObject({
      severity: "Medium",
      severity_mapping: "unmapped",
    });
  });

  it("matches the state case-insensitively", () => {
    expect(onlyEvent(envelope(legacyAlarm({ NewStateValue: " ok " })))).toMatchObject({
      status: "resolved",
      source_event: "ok",
      severity: "info",
      resolved_at: "2012-06-09T09:48:35.237Z",
    });
    expect(onlyEvent(envelope(legacyAlarm({ NewStateValue: "insufficient_data" })))).toMatchObject({
      status: "active",
      severity: "Low",
      labels: { vigil_no_data: "true" },
    });
  });

  it("applies the registration's severity overrides", () => {
    expect(onlyEvent(envelope(legacyAlarm()), { severityOverrides: { alarm: "Critical" } })).toMatchObject({
      source_severity: "ALARM",
      severity: "Critical",
      display_priority: 1,
    });
  });

  it("accepts the envelope Type in any case", () => {
    expect(eventsOf(parseJson(envelope(legacyAlarm(), { Type: "notification" })))).toHaveLength(1);
  });
});

// --- SNS handshakes ------------------------------------------------------------------------------

const FIXTURE_SUBSCRIBE_URL =
  "https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:eu-west-1:1234567890:alerta-test&Token=2336412f37fb687f5d51e6e241da92fd72d769c5b4ca6fd6cd6d30949d5a51abf7e21aae199b52813b6f2ea51b41e3119b599532d25df4e6aea368b3a6d8272d38688f73c116b04204e9afb2f5b1d8c4bdb823103299a9f1da7409f1dcf4096ba20a0b0222cc493586e76450e3be6715";

function handshake(type: string, subscribeUrl: unknown): Record<string, unknown> {
  return {
    Type: type,
    MessageId: "47138184-6831-46b8-8f7c-afc488602d7d",
    Token: "2336412f37fb687f5d51e6e2",
    TopicArn: TOPIC_ARN,
    Message: `You have chosen to deactivate subscription arn:aws:sns:us-west-1:111122223333:ops-us-west-1:2bcfbf39.`,
    SubscribeURL: subscribeUrl,
    Timestamp: "2024-05-14T10:12:31.512Z",
    SignatureVersion: "1",
    Signature: "c2lnbmF0dXJl",
    SigningCertURL: "https://sns.us-west-1.amazonaws.com/SimpleNotificationService-0000.pem",
  };
}

const US_WEST_SUBSCRIBE_URL = `https://sns.us-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC_ARN}&Token=2336412f`;

describe("parseCloudwatch: SNS handshakes", () => {
  it("yields no event for an UnsubscribeConfirmation", () => {
    expect(parseJson(handshake("UnsubscribeConfirmation", US_WEST_SUBSCRIBE_URL))).toEqual({
      ok: true,
      events: [],
      note: `SNS UnsubscribeConfirmation for ${TOPIC_ARN}: a subscription handshake, not an alarm`,
    });
  });

  it("yields no event for a handshake without TopicArn or SubscribeURL", () => {
    expect(parseJson({ Type: "subscriptionconfirmation" })).toEqual({
      ok: true,
      events: [],
      note: "SNS SubscriptionConfirmation: a subscription handshake, not an alarm",
    });
  });
});

describe("readSnsHandshake", () => {
  it("extracts the fixture's SubscriptionConfirmation, confirmable", () => {
    const body = readFixture("cloudwatch", "sns-subscription-confirmation.json");
    expect(readSnsHandshake({ body, headers: snsHeaders("SubscriptionConfirmation") })).toEqual({
      type: "SubscriptionConfirmation",
      topicArn: "arn:aws:sns:eu-west-1:1234567890:alerta-test",
      messageId: "8a14e4f3-f3ab-4be0-a12f-681ee8fe214f",
      subscribeUrl: FIXTURE_SUBSCRIBE_URL,
      confirmUrl: FIXTURE_SUBSCRIBE_URL,
    });
  });

  it("never offers the URL of an UnsubscribeConfirmation for calling", () => {
    const body = JSON.stringify(handshake("UnsubscribeConfirmation", US_WEST_SUBSCRIBE_URL));
    expect(readSnsHandshake({ body, headers: {} })).toEqual({
      type: "UnsubscribeConfirmation",
      topicArn: TOPIC_ARN,
      messageId: "47138184-6831-46b8-8f7c-afc488602d7d",
      subscribeUrl: US_WEST_SUBSCRIBE_URL,
      confirmUrl: null,
    });
  });

  it.each([
    ["http", "http://sns.us-west-1.amazonaws.com/?Action=ConfirmSubscription"],
    ["another host", "https://evil.example.com/?Action=ConfirmSubscription"],
    ["a look-alike host", "https://sns.us-west-1.amazonaws.com.evil.example/?Action=ConfirmSubscription"],
    ["a look-alike suffix", "https://sns.us-west-1.notamazonaws.com/?Action=ConfirmSubscription"],
    ["credentials", "https://user:pw@sns.us-west-1.amazonaws.com/?Action=ConfirmSubscription"],
    ["a port", "https://sns.us-west-1.amazonaws.com:8443/?Action=ConfirmSubscription"],
    ["not SNS", "https://s3.us-west-1.amazonaws.com/?Action=ConfirmSubscription"],
    ["not a URL", "sns.us-west-1.amazonaws.com/?Action=ConfirmSubscription"],
  ])("does not offer a SubscribeURL with %s for calling", (_name, url) => {
    const body = JSON.stringify(handshake("SubscriptionConfirmation", url));
    expect(readSnsHandshake({ body, headers: {} })).toMatchObject({
      type: "SubscriptionConfirmation",
      subscribeUrl: url,
      confirmUrl: null,
    });
  });

  it("keeps the record but offers nothing when SubscribeURL is missing", () => {
    const body = JSON.stringify(handshake("SubscriptionConfirmation", undefined));
    expect(readSnsHandshake({ body, headers: {} })).toMatchObject({ subscribeUrl: null, confirmUrl: null });
  });

  it.each([
    ["a Notification", JSON.stringify(envelope(legacyAlarm()))],
    ["a raw alarm", JSON.stringify(legacyAlarm())],
    ["an unknown Type", JSON.stringify({ Type: "Ping" })],
    ["non-JSON", "SubscriptionConfirmation"],
    ["an empty body", ""],
  ])("returns null for %s", (_name, body) => {
    expect(readSnsHandshake({ body, headers: {} })).toBeNull();
  });
});

// --- Bad input -----------------------------------------------------------------------------------

describe("parseCloudwatch: bad input", () => {
  itRejectsUnreadableBodies(parseCloudwatch, {
    empty: "",
    notJson: [
      ["plain text", "ALARM: disk full"],
      ["truncated JSON", readFixture("cloudwatch", "sns-alarm-s3-bucket-size.json").slice(0, 300)],
    ],
    headers: snsHeaders("Notification"),
  });

  it.each([
    ["an empty object", {}],
    ["an array", [legacyAlarm()]],
    ["null", null],
    ["a string", "ALARM"],
    ["an alarm without AlarmName", legacyAlarm({ AlarmName: "" })],
    [
      "an EventBridge alarm event",
      { "detail-type": "CloudWatch Alarm State Change", detail: { alarmName: "x" } },
    ],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual({
      ok: false,
      error: "not a CloudWatch alarm: expected an SNS message (Type) or an alarm (AlarmName)",
    });
  });

  it.each(["Ping", "", "SubscriptionConfirmed"])("rejects the SNS Type %j", (type) => {
    expect(parseJson(envelope(legacyAlarm(), { Type: type }))).toEqual({
      ok: false,
      error: `not a CloudWatch alarm: unsupported SNS message Type "${type}"`,
    });
  });

  it.each([
    ["a plain-text Message", "Hello from SNS"],
    ["truncated alarm JSON", JSON.stringify(legacyAlarm()).slice(0, 80)],
    ["JSON that is not an alarm", JSON.stringify({ detail: { alarmName: "x" } })],
    ["an alarm without AlarmName", JSON.stringify(legacyAlarm({ AlarmName: null }))],
    ["a JSON array", JSON.stringify([legacyAlarm()])],
  ])("rejects a Notification whose Message is %s", (_name, message) => {
    expect(parseJson(envelope(message))).toEqual({
      ok: false,
      error: "not a CloudWatch alarm: the SNS Notification's Message is not alarm JSON with an AlarmName",
    });
  });

  it("rejects a Notification whose Message is an object or missing", () => {
    for (const Message of [legacyAlarm(), undefined]) {
      expect(parseJson({ ...envelope(""), Message })).toEqual({
        ok: false,
        error: "not a CloudWatch alarm: the SNS Notification's Message is not alarm JSON with an AlarmName",
      });
    }
  });
});
