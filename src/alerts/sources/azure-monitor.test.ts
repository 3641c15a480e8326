import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import { parseAzureMonitor } from "./azure-monitor.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("azure-monitor", name);
  return parseAzureMonitor({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseAzureMonitor({ body: JSON.stringify(payload), headers: {}, options });
}

// The Microsoft Learn storage-account metric alert, fired and resolved.
function storageMetricAlert(overrides: Partial<AlertEvent>): AlertEvent {
  return {
    external_uid: "12345678-1234-1234-1234-1234567890ab",
    status: "active",
    ignore_reason: null,
    title: "test-metricAlertRule",
    title_is_fallback: false,
    description: "Alert rule description",
    source_severity: "Sev3",
    severity: "Low",
    display_priority: 4,
    severity_mapping: "mapped",
    // 2021-11-15T09:35:24.3468506Z, truncated to milliseconds.
    triggered_at: "2021-11-15T09:35:24.346Z",
    resolved_at: null,
    // alertContext.properties, then customProperties (equal here); no dimensions.
    labels: {
      customKey1: "value1",
      customKey2: "value2",
      monitoring_service: "Platform",
      resource: "test-storageAccount",
      signal_type: "Metric",
    },
    // Metric criteria carry no search-results link.
    links: [],
    is_test: false,
    source_event: "Fired",
    unmapped: [],
    ...overrides,
  };
}

const LOG_SEARCH_UI =
  "https://portal.azure.com#@12f345bf-12f3-12af-12ab-1d2cd345db67/blade/Microsoft_Azure_Monitoring_Logs/LogsBlade/source/Alerts.EmailLinks/...";

// Expected events below were written by hand from the fixture files and section 8 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "metric-alert-dynamic-fired.json": [storageMetricAlert({})],

  "metric-alert-dynamic-resolved.json": [
    storageMetricAlert({
      status: "resolved",
      source_event: "Resolved",
      resolved_at: "2021-11-15T10:00:00.000Z",
    }),
  ],

  "log-alert-v2-fired.json": [
    {
      external_uid: "12345a-1234b-123c-123d-12345678e",
      status: "active",
      ignore_reason: null,
      title: "AcmeRule",
      title_is_fallback: false,
      description: "log alert rule V2",
      source_severity: "Sev4",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      triggered_at: "2020-07-09T14:04:49.996Z",
      resolved_at: null,
      labels: {
        ResourceId:
          "/subscriptions/12345a-1234b-123c-123d-12345678e/resourceGroups/TEST/providers/Microsoft.Compute/virtualMachines/testvm",
        monitoring_service: "Log Alerts V2",
        name1: "value1",
        name2: "value2",
        resource: "testvm",
        signal_type: "Log",
      },
      links: [{ kind: "source", url: LOG_SEARCH_UI }],
      is_test: false,
      source_event: "Fired",
      unmapped: [],
    },
  ],

  "activity-log-alert-fired.json": [
    {
      external_uid: "12345678-1234-1234-1234-1234567890ab",
      status: "active",
      ignore_reason: null,
      title: "test-activityLogAlertRule",
      title_is_fallback: false,
      // Not empty, so operationName and status are not used.
      description: "Alert rule description",
      source_severity: "Sev4",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      triggered_at: "2021-11-16T08:29:01.293Z",
      resolved_at: null,
      // alertContext.properties of an activity log alert is the event's data, not labels.
      labels: {
        monitoring_service: "Activity Log - Administrative",
        resource: "test-VM",
        signal_type: "Activity Log",
      },
      links: [],
      is_test: false,
      source_event: "Fired",
      unmapped: [],
    },
  ],

  "metric-alert-static-vm-cpu-fired.json": [
    {
      external_uid: "aaaa0a0a-bb1b-cc2c-dd3d-eeeeee4e4e4e",
      status: "active",
      ignore_reason: null,
      title: "WCUS-R2-Gen2",
      title_is_fallback: false,
      description: "",
      source_severity: "Sev3",
      severity: "Low",
      display_priority: 4,
      severity_mapping: "mapped",
      triggered_at: "2019-03-22T13:58:24.371Z",
      resolved_at: null,
      // properties: null.
      labels: {
        ResourceId: "b1b1b1b1-cccc-dddd-eeee-f2f2f2f2f2f2",
        monitoring_service: "Platform",
        resource: "wcus-r2-gen2",
        signal_type: "Metric",
      },
      links: [],
      is_test: false,
      source_event: "Fired",
      unmapped: [],
    },
  ],
};

describe("parseAzureMonitor: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("azure-monitor", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    const result = parseFixture(name);
    expect(result).toEqual({ ok: true, events: expected });
    expect(result.ok && "note" in result).toBe(false);
  });
});

// --- Variants no fixture shows -------------------------------------------------------------------

const ALERT_ID =
  "/subscriptions/11111111-1111-1111-1111-111111111111/providers/Microsoft.AlertsManagement/alerts/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";

function essentials(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    alertId: ALERT_ID,
    alertRule: "checkout-availability",
    severity: "Sev1",
    signalType: "Metric",
    monitorCondition: "Fired",
    monitoringService: "Platform",
    alertTargetIDs: [
      "/subscriptions/11111111-1111-1111-1111-111111111111/resourcegroups/shop/providers/microsoft.insights/components/checkout",
    ],
    configurationItems: ["checkout"],
    originAlertId:
      "11111111-1111-1111-1111-111111111111_shop_microsoft.insights_metricalerts_checkout-availability",
    firedDateTime: "2024-05-14T10:12:31.5123456Z",
    description: "Checkout availability test failing",
    essentialsVersion: "1.0",
    alertContextVersion: "1.0",
    ...overrides,
  };
}

function commonAlert(
  essentialsOverrides: Record<string, unknown> = {},
  alertContext: unknown = {},
  customProperties?: unknown,
): Record<string, unknown> {
  const data: Record<string, unknown> = { essentials: essentials(essentialsOverrides), alertContext };
  if (customProperties !== undefined) data.customProperties = customProperties;
  return { schemaId: "azureMonitorCommonAlertSchema", data };
}

// An Application Insights availability (web test) alert context.
const WEBTEST_CONTEXT = {
  properties: { team: "checkout" },
  conditionType: "WebtestLocationAvailabilityCriteria",
  condition: {
    windowSize: "PT5M",
    allOf: [
      {
        metricName: "Failed Location",
        metricNamespace: null,
        operator: "GreaterThan",
        threshold: "2",
        timeAggregation: "Sum",
        dimensions: null,
        metricValue: 5,
        webTestName: "checkout-ping",
      },
    ],
    windowStartTime: "2024-05-14T10:05:00.000Z",
    windowEndTime: "2024-05-14T10:10:00.000Z",
  },
};

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

describe("parseAzureMonitor: documented variants", () => {
  it("reads a web test availability alert with null dimensions", () => {
    expect(onlyEvent(commonAlert({}, WEBTEST_CONTEXT))).toEqual({
      external_uid: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
      status: "active",
      ignore_reason: null,
      title: "checkout-availability",
      title_is_fallback: false,
      description: "Checkout availability test failing",
      source_severity: "Sev1",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.512Z",
      resolved_at: null,
      labels: {
        monitoring_service: "Platform",
        resource: "checkout",
        signal_type: "Metric",
        team: "checkout",
      },
      links: [],
      is_test: false,
      source_event: "Fired",
      unmapped: [],
    });
  });

  it.each([
    ["Sev0", "Critical", 1],
    ["Sev1", "High", 2],
    ["sev2", "Medium", 3],
    [" Sev3 ", "Low", 4],
    ["Sev4", "info", 5],
  ] as const)("maps severity %j", (severity, bucket, priority) => {
    expect(onlyEvent(commonAlert({ severity }))).toMatchObject({
      source_severity: severity.trim(),
      severity: bucket,
      display_priority: priority,
      severity_mapping: "mapped",
    });
  });

  it("marks an unknown severity unmapped and a missing one missing", () => {
    expect(onlyEvent(commonAlert({ severity: "Sev9" }))).toMatchObject({
      severity: "Medium",
      severity_mapping: "unmapped",
      unmapped: [{ field: "severity", value: "Sev9" }],
    });
    expect(onlyEvent(commonAlert({ severity: null }))).toMatchObject({
      source_severity: "",
      severity_mapping: "missing",
      unmapped: [],
    });
  });

  it("applies the registration's severity overrides", () => {
    expect(
      onlyEvent(commonAlert({ severity: "Sev3" }), { severityOverrides: { SEV3: "High" } }),
    ).toMatchObject({
      severity: "High",
    });
  });

  it("makes an unknown monitorCondition unchanged and unmapped", () => {
    expect(onlyEvent(commonAlert({ monitorCondition: "Suppressed" }))).toMatchObject({
      status: "unchanged",
      source_event: "Suppressed",
      unmapped: [{ field: "status", value: "Suppressed" }],
    });
    expect(onlyEvent(commonAlert({ monitorCondition: "resolved" })).status).toBe("resolved");
  });

  it("describes an activity log alert without description by its operation and status", () => {
    const context = {
      operationName: "Microsoft.Compute/virtualMachines/delete",
      status: "Succeeded",
      properties: { message: "Microsoft.Compute/virtualMachines/delete" },
    };
    expect(onlyEvent(commonAlert({ signalType: "Activity Log", description: "" }, context))).toMatchObject({
      description: "Microsoft.Compute/virtualMachines/delete\n\nSucceeded",
      labels: { monitoring_service: "Platform", resource: "checkout", signal_type: "Activity Log" },
    });
    // Only activity log alerts fall back; a metric alert keeps an empty description.
    expect(onlyEvent(commonAlert({ description: "" }, context)).description).toBe("");
  });

  it("lets customProperties win over the rule's properties, and joins dimensions", () => {
    const context = {
      properties: { team: "rule-team", tier: "gold" },
      conditionType: "SingleResourceMultipleMetricCriteria",
      condition: {
        allOf: [
          {
            metricName: "Requests",
            dimensions: [
              { name: "tier", value: "edge" },
              { name: "Region", value: "westeurope" },
            ],
          },
          {
            metricName: "Failures",
            dimensions: [
              { name: "Region", value: "northeurope" },
              { name: "resource", value: "gw-1" },
            ],
          },
        ],
      },
    };
    expect(onlyEvent(commonAlert({}, context, { team: "group-team", ticket: 42 })).labels).toEqual({
      Region: "westeurope,northeurope",
      monitoring_service: "Platform",
      // A dimension named resource keeps its value.
      resource: "gw-1",
      signal_type: "Metric",
      team: "group-team",
      ticket: "42",
      tier: "gold,edge",
    });
  });

  it("reads the rule's properties for Log signals", () => {
    expect(
      onlyEvent(commonAlert({ signalType: "log" }, { properties: { owner: "sre" } })).labels,
    ).toMatchObject({
      owner: "sre",
    });
  });

  it("joins several configuration items", () => {
    expect(onlyEvent(commonAlert({ configurationItems: ["vm-1", "vm-2"] })).labels.resource).toBe(
      "vm-1,vm-2",
    );
  });

  it("takes linkToSearchResultsUI when there is no filtered link, from the first criterion only", () => {
    const context = {
      conditionType: "LogQueryCriteria",
      condition: {
        allOf: [
          {
            searchQuery: "Heartbeat",
            metricMeasureColumn: null,
            dimensions: [],
            linkToSearchResultsUI: "https://portal.azure.com#@t/blade/1",
          },
          { searchQuery: "Perf", linkToFilteredSearchResultsUI: "https://portal.azure.com#@t/blade/2" },
        ],
      },
    };
    expect(onlyEvent(commonAlert({ signalType: "Log" }, context)).links).toEqual([
      { kind: "source", url: "https://portal.azure.com#@t/blade/1" },
    ]);
  });

  it("reads firedDateTime and resolvedDateTime", () => {
    expect(
      onlyEvent(
        commonAlert({ monitorCondition: "Resolved", resolvedDateTime: "2024-05-14T10:30:00.9999999Z" }),
      ),
    ).toMatchObject({
      status: "resolved",
      triggered_at: "2024-05-14T10:12:31.512Z",
      resolved_at: "2024-05-14T10:30:00.999Z",
    });
  });

  it("hashes the whole alertId when its last segment is not path-safe", () => {
    // H(alertId), computed independently with python3 hashlib.
    const base = "/subscriptions/1111/providers/Microsoft.AlertsManagement/alerts/";
    expect(onlyEvent(commonAlert({ alertId: base })).external_uid).toBe("50f3924b4f572218288e77d53e23a81d");
    expect(onlyEvent(commonAlert({ alertId: `${base}bad id` })).external_uid).toBe(
      "75e3cd4eb7a9953ab5a578b7a911fe39",
    );
  });

  it("uses an alertId without slashes as it is", () => {
    expect(onlyEvent(commonAlert({ alertId: "0f1e2d3c" })).external_uid).toBe("0f1e2d3c");
  });

  it("falls back to the uid when alertRule is empty", () => {
    expect(onlyEvent(commonAlert({ alertRule: "" }))).toMatchObject({
      title: "azure-monitor alert 0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
      title_is_fallback: true,
    });
  });

  it("accepts a missing alertContext", () => {
    const payload = { schemaId: "AzureMonitorCommonAlertSchema", data: { essentials: essentials() } };
    expect(onlyEvent(payload)).toMatchObject({
      external_uid: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
      links: [],
    });
  });
});

describe("parseAzureMonitor: bad input", () => {
  const notCommonSchema = {
    ok: false,
    error:
      'not an Azure Monitor common alert: expected schemaId "azureMonitorCommonAlertSchema" (enable the common alert schema on the action group)',
  };

  itRejectsUnreadableBodies(parseAzureMonitor, {
    empty: "\n",
    notJson: [
      ["plain text", "Azure alert fired"],
      ["truncated JSON", '{"schemaId":"azureMonitorCommonAlertSchema","data":{"essentials":{'],
    ],
  });

  it.each([
    ["an empty object", {}],
    ["an array", [commonAlert()]],
    ["null", null],
    // The older non-common schemas.
    ["a classic metric alert", { status: "Activated", context: { id: "/subscriptions/x", name: "cpu" } }],
    [
      "the older metric alert schema",
      { schemaId: "AzureMonitorMetricAlert", data: { essentials: essentials() } },
    ],
    ["an activity log schema", { schemaId: "Microsoft.Insights/activityLogs", data: { context: {} } }],
    ["schemaId not a string", { schemaId: 1, data: { essentials: essentials() } }],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual(notCommonSchema);
  });

  it.each([
    ["no data", { schemaId: "azureMonitorCommonAlertSchema" }],
    ["data null", { schemaId: "azureMonitorCommonAlertSchema", data: null }],
    ["no essentials", { schemaId: "azureMonitorCommonAlertSchema", data: { alertContext: {} } }],
    ["essentials as a string", { schemaId: "azureMonitorCommonAlertSchema", data: { essentials: "x" } }],
  ])("rejects %s, naming data.essentials", (_name, payload) => {
    expect(parseJson(payload)).toEqual({
      ok: false,
      error: "not an Azure Monitor common alert: data.essentials is missing",
    });
  });

  it.each([undefined, null, "", "  "])("rejects alertId %j", (alertId) => {
    expect(parseJson(commonAlert({ alertId }))).toEqual({
      ok: false,
      error: "not an Azure Monitor common alert: data.essentials.alertId is missing",
    });
  });
});
