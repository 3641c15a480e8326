// Text PostgreSQL cannot store (U+0000, an unpaired UTF-16 surrogate) in any field a monitoring
// source sends. A JSON body carries both as escapes and a form body can carry a raw NUL byte. The
// delivery must never be lost: it is answered 202 (or the 400 the source's own rules give), its
// invocation is recorded and listed, and the alert reads back with the text cleaned to U+FFFD.
// Everything goes through the real trigger endpoint, on both engines.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { readAlert, readHistory, registerAlerts, triggerPathOf } from "../../../test/alerts.ts";
import { fixtureFiles, readFixture } from "../../../test/fixtures.ts";
import { type Auth, describeEachEngine, type Harness } from "../../../test/harness.ts";
import { type AlertEvent, PARSERS, SOURCE_TYPES, type SourceType } from "../sources/index.ts";

const NUL = "\u0000";
const HIGH = "\ud800";
const LOW = "\udfff";
/** One of each kind, never adjacent (a high then a low surrogate would be a valid pair). */
const POISON = `${NUL}${HIGH}-${LOW}`;

// ---- the rule, written here on its own so that the tests do not trust the code they test ----

function isUnstorableAt(text: string, index: number): boolean {
  const unit = text.charCodeAt(index);
  if (unit === 0) return true;
  const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
  const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;
  if (isHigh(unit)) return !isLow(text.charCodeAt(index + 1));
  if (isLow(unit)) return !isHigh(text.charCodeAt(index - 1));
  return false;
}

function cleaned(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) out += isUnstorableAt(text, i) ? "\ufffd" : text[i];
  return out;
}

/** Deep: every string (keys too) cleaned. */
function cleanedValue<T>(value: T): T {
  if (typeof value === "string") return cleaned(value) as T;
  if (Array.isArray(value)) return value.map(cleanedValue) as T;
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [cleaned(key), cleanedValue(item)]),
    ) as T;
  }
  return value;
}

/** Paths of the strings (or keys) in `value` that still hold unstorable text. */
function unstorablePaths(value: unknown, path = "$"): string[] {
  if (typeof value === "string") {
    for (let i = 0; i < value.length; i++) if (isUnstorableAt(value, i)) return [path];
    return [];
  }
  if (Array.isArray(value)) return value.flatMap((item, n) => unstorablePaths(item, `${path}[${n}]`));
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => [
      ...unstorablePaths(key, `${path}{key ${key}}`),
      ...unstorablePaths(item, `${path}.${key}`),
    ]);
  }
  return [];
}

// ---- poisoning the real fixtures ----

type Json = unknown;

/** A string poisoned in its middle: short enum-like values stop matching, text keeps both halves. */
function poisonText(text: string): string {
  const middle = Math.floor(text.length / 2);
  return `${text.slice(0, middle)}${POISON}${text.slice(middle)}`;
}

/** JSON held as text inside a field (SNS `Message`, Zabbix `tags`): poisoned inside, not broken. */
function embeddedJson(text: string): Json | null {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return null;
  try {
    return JSON.parse(trimmed);
  } catch {
    return null;
  }
}

/** Counts the string leaves a poisoning can reach, JSON held in text included. */
function leafCount(value: Json): number {
  if (typeof value === "string") {
    const inner = embeddedJson(value);
    return inner === null ? 1 : leafCount(inner);
  }
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + leafCount(item), 0);
  if (typeof value === "object" && value !== null) {
    return Object.values(value).reduce((sum: number, item) => sum + leafCount(item), 0);
  }
  return 0;
}

/** The value with the string leaves `chosen(n)` says yes to poisoned, leaves numbered in walk order. */
function poisonLeaves(value: Json, chosen: (leaf: number) => boolean): Json {
  let next = 0;
  const walk = (node: Json): Json => {
    if (typeof node === "string") {
      const inner = embeddedJson(node);
      if (inner !== null) return JSON.stringify(walk(inner));
      return chosen(next++) ? poisonText(node) : node;
    }
    if (Array.isArray(node)) return node.map(walk);
    if (typeof node === "object" && node !== null) {
      return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, walk(item)]));
    }
    return node;
  };
  return walk(value);
}

function headersFor(source: SourceType): Record<string, string> {
  return source === "cloudwatch"
    ? { "content-type": "text/plain; charset=UTF-8", "x-amz-sns-message-type": "Notification" }
    : { "content-type": "application/json" };
}

function parse(source: SourceType, body: string, headers = headersFor(source)) {
  return PARSERS[source]({ body, headers, options: { severityOverrides: {} } });
}

// ---- HTTP ----

interface Registration {
  id: string;
  source: SourceType;
  triggerPath: string;
}

let registrations = 0;

async function register(
  h: Harness,
  auth: Auth,
  source: SourceType,
  settings: Record<string, unknown> = {},
): Promise<Registration> {
  registrations += 1;
  const body = await registerAlerts(h, auth, {
    source,
    integration: `unstorable-${registrations}`,
    ...settings,
  });
  return { id: body.id, source, triggerPath: triggerPathOf(body) };
}

function deliver(
  h: Harness,
  registration: Registration,
  body: string,
  headers = headersFor(registration.source),
) {
  return h.vigil.app.inject({ method: "POST", url: registration.triggerPath, headers, payload: body });
}

type Delivery = Awaited<ReturnType<typeof deliver>>;

/** The invocation id of a delivery's answer: the 202 body, or the 400's extras. */
function invocationIdOf(response: Delivery): string {
  const body = response.json();
  return response.statusCode === 202 ? body.invocation_id : body.extras[0].invocation_id;
}

/** The delivery's invocation as listed and as read alone; both must be readable. */
async function readInvocation(h: Harness, auth: Auth, registration: Registration, response: Delivery) {
  const invocationId = invocationIdOf(response);
  const runs = `/platform/api/v1/webhooks/${registration.id}/runs`;
  const list = await h.vigil.app.inject({ url: `${runs}?limit=100`, headers: auth });
  expect(list.statusCode, list.body).toBe(200);
  const listed = list
    .json()
    .runs.find((run: { invocation_id: string }) => run.invocation_id === invocationId);
  expect(listed, `invocation ${invocationId} is listed`).toBeDefined();
  const detail = await h.vigil.app.inject({ url: `${runs}/${invocationId}`, headers: auth });
  expect(detail.statusCode, detail.body).toBe(200);
  return { listed, detail: detail.json() };
}

/** A 202 whose invocation is recorded as accepted; returns the answer. */
async function expectAccepted(h: Harness, auth: Auth, registration: Registration, response: Delivery) {
  expect(response.statusCode, response.body).toBe(202);
  const accepted = response.json();
  const { listed, detail } = await readInvocation(h, auth, registration, response);
  expect(listed).toMatchObject({ status: "accepted", error: null, note: accepted.note });
  expect(detail.outcome).toEqual({ events: accepted.events, alerts: accepted.alerts, note: accepted.note });
  expect(unstorablePaths(accepted)).toEqual([]);
  return accepted;
}

/** The source's own 400, recorded as a failed invocation with the cleaned error. */
async function expectRefused(
  h: Harness,
  auth: Auth,
  registration: Registration,
  response: Delivery,
  error: string,
) {
  expect(response.statusCode, response.body).toBe(400);
  expect(response.json()).toMatchObject({ errCode: "INVALID_PAYLOAD", msg: error });
  const { listed } = await readInvocation(h, auth, registration, response);
  expect(listed).toMatchObject({ status: "failed", error });
}

// ---- bodies from the real fixtures ----

const json = (source: string, file: string) => JSON.parse(readFixture(source, file));

/** An SNS Notification of the S3 bucket alarm (no AlarmArn: the region comes from TopicArn). */
function snsAlarm(change: { envelope?: Record<string, unknown>; alarm?: Record<string, unknown> }) {
  const envelope = json("cloudwatch", "sns-alarm-s3-bucket-size.json");
  const alarm = { ...JSON.parse(envelope.Message), ...change.alarm };
  return JSON.stringify({ ...envelope, Message: JSON.stringify(alarm), ...change.envelope });
}

function zabbixProblem(change: Record<string, unknown>) {
  return JSON.stringify({ ...json("zabbix", "keep-script-problem-high.json"), ...change });
}

function pagerdutyEvent(change: (event: Record<string, unknown>) => void) {
  const body = json("pagerduty", "incident-triggered.json");
  change(body.event);
  return JSON.stringify(body);
}

describeEachEngine(
  "text PostgreSQL cannot store, from a monitoring source",
  (harness) => {
    // ---- CloudWatch ----

    it.each([
      ["U+0000", `Notifi${NUL}cation`],
      ["a lone surrogate", `Notification${HIGH}`],
    ])("CloudWatch SNS Type with %s: the source's 400, the invocation recorded", async (_name, type) => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "cloudwatch");
      const body = snsAlarm({ envelope: { Type: type } });
      const response = await deliver(h, registration, body);
      await expectRefused(
        h,
        auth,
        registration,
        response,
        `cloudwatch: not a CloudWatch alarm: unsupported SNS message Type "${cleaned(type)}"`,
      );
      const { detail } = await readInvocation(h, auth, registration, response);
      // The payload itself is kept as received.
      expect(detail.payload).toBe(body);
    });

    it.each([
      ["U+0000", `arn:aws:sns:eu-west-1${NUL}:1234567890:alerta-test`, `eu-west-1\ufffd`],
      ["a lone surrogate", `arn:aws:sns:eu-${LOW}west-1:1234567890:alerta-test`, "eu-\ufffdwest-1"],
    ])(
      "CloudWatch SNS TopicArn with %s: 202, the alert's region label cleaned",
      async (_name, arn, region) => {
        const h = harness();
        const { auth } = await h.createKey();
        const registration = await register(h, auth, "cloudwatch");
        const response = await deliver(h, registration, snsAlarm({ envelope: { TopicArn: arn } }));
        const accepted = await expectAccepted(h, auth, registration, response);
        expect(accepted.alerts).toHaveLength(1);
        const alert = await readAlert(h, auth, accepted.alerts[0].id);
        expect(alert.title).toBe("bucketbytesAlarm");
        expect(alert.labels.aws_region).toBe(region);
        // Not a region code any more: no console link can be made from it.
        expect(alert.links).toEqual([]);
      },
    );

    it("CloudWatch subscription handshake with U+0000 in TopicArn: 202, the note and the confirm job stored", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "cloudwatch", { sns_auto_confirm: true });
      const handshake = json("cloudwatch", "sns-subscription-confirmation.json");
      const arn = `arn:aws:sns:eu-west-1:1234567890:alerta${NUL}${HIGH}test`;
      const response = await deliver(h, registration, JSON.stringify({ ...handshake, TopicArn: arn }), {
        "content-type": "text/plain; charset=UTF-8",
        "x-amz-sns-message-type": "SubscriptionConfirmation",
      });
      const accepted = await expectAccepted(h, auth, registration, response);
      expect(accepted).toMatchObject({
        events: 0,
        alerts: [],
        note: `SNS SubscriptionConfirmation for ${cleaned(arn)}: a subscription handshake, not an alarm; confirming the subscription`,
      });
    });

    // The console link encodes the name as sent: U+0000 as %00; a lone surrogate, which
    // encodeURIComponent refuses, as U+FFFD, the way a URL parser reads it.
    it.each([
      ["U+0000", `bucket${NUL}bytesAlarm`, "bucket%00bytesAlarm"],
      ["lone surrogates", `bucket${HIGH}bytes${LOW}Alarm`, "bucket%EF%BF%BDbytes%EF%BF%BDAlarm"],
      ["both", `${LOW}bucket${NUL}bytesAlarm${HIGH}`, "%EF%BF%BDbucket%00bytesAlarm%EF%BF%BD"],
    ])(
      "CloudWatch Message.AlarmName with %s: 202, the title cleaned, the console link kept",
      async (_name, name, encoded) => {
        const h = harness();
        const { auth } = await h.createKey();
        const registration = await register(h, auth, "cloudwatch");
        const response = await deliver(h, registration, snsAlarm({ alarm: { AlarmName: name } }));
        const accepted = await expectAccepted(h, auth, registration, response);
        const alert = await readAlert(h, auth, accepted.alerts[0].id);
        expect(alert.title).toBe(cleaned(name));
        expect(alert.links).toEqual([
          {
            kind: "source",
            url: `https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#alarmsV2:alarm/${encoded}`,
          },
        ]);
        // The same delivery again is the same alert, unchanged.
        const again = await deliver(h, registration, snsAlarm({ alarm: { AlarmName: name } }));
        expect(again.statusCode, again.body).toBe(202);
        expect(again.json().alerts).toEqual([{ ...accepted.alerts[0], outcome: "duplicate" }]);
      },
    );

    // ---- Zabbix ----

    it.each([
      ["U+0000", `312${NUL}54`, "312%0054"],
      ["a lone surrogate", `31254${HIGH}`, "31254%EF%BF%BD"],
    ])("Zabbix id with %s: 202, the event link built from the id", async (_name, id, encoded) => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "zabbix");
      const accepted = await expectAccepted(
        h,
        auth,
        registration,
        await deliver(h, registration, zabbixProblem({ id })),
      );
      const alert = await readAlert(h, auth, accepted.alerts[0].id);
      expect(alert).toMatchObject({ external_uid: "23711", title: "High CPU utilization (over 90% for 5m)" });
      expect(alert.links).toEqual([
        {
          kind: "source",
          url: `https://zabbix.example.com/tr_events.php?triggerid=23711&eventid=${encoded}`,
        },
      ]);
    });

    it.each([
      ["U+0000", `237${NUL}11`, "237%0011"],
      ["a lone surrogate", `23711${LOW}`, "23711%EF%BF%BD"],
    ])(
      "Zabbix triggerId with %s: 202, one alert per trigger, readable",
      async (_name, triggerId, encoded) => {
        const h = harness();
        const { auth } = await h.createKey();
        const registration = await register(h, auth, "zabbix");
        const body = zabbixProblem({ triggerId });
        const accepted = await expectAccepted(h, auth, registration, await deliver(h, registration, body));
        const alert = await readAlert(h, auth, accepted.alerts[0].id);
        // Not path-safe: the uid is the hash of the id, the same for every delivery of the trigger.
        expect(alert.external_uid).toMatch(/^[0-9a-f]{32}$/);
        expect(alert.links).toEqual([
          {
            kind: "source",
            url: `https://zabbix.example.com/tr_events.php?triggerid=${encoded}&eventid=31254`,
          },
        ]);
        expect(alert.raw_payload).toBe(body);
        const resolved = zabbixProblem({ triggerId, status: "RESOLVED", value: "0" });
        const again = await deliver(h, registration, resolved);
        expect(again.statusCode, again.body).toBe(202);
        expect(again.json().alerts).toEqual([{ ...accepted.alerts[0], outcome: "resolved" }]);
      },
    );

    // ---- PagerDuty ----

    it.each([
      ["U+0000", `incident.trig${NUL}gered`],
      ["a lone surrogate", `incident.triggered${HIGH}`],
    ])("PagerDuty event_type with %s: 202, the alert and its history readable", async (_name, eventType) => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "pagerduty");
      const body = pagerdutyEvent((event) => {
        event.event_type = eventType;
      });
      const accepted = await expectAccepted(h, auth, registration, await deliver(h, registration, body));
      expect(accepted.alerts).toEqual([
        { id: expect.any(String), external_uid: "PFQZPSY", outcome: "created" },
      ]);
      const alert = await readAlert(h, auth, accepted.alerts[0].id);
      expect(alert).toMatchObject({ title: "Test Incident 3", raw_payload: body });
      const { events: history } = await readHistory(h, auth, accepted.alerts[0].id);
      expect(history.map((event) => event.source_event)).toEqual([cleaned(eventType)]);
    });

    it.each([
      ["U+0000", `inci${NUL}dent`],
      ["a lone surrogate", `${LOW}incident`],
    ])("PagerDuty resource_type with %s: 202, the note recorded", async (_name, resourceType) => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "pagerduty");
      const body = pagerdutyEvent((event) => {
        delete event.event_type;
        event.resource_type = resourceType;
      });
      const accepted = await expectAccepted(h, auth, registration, await deliver(h, registration, body));
      expect(accepted).toMatchObject({
        events: 0,
        alerts: [],
        note: `PagerDuty ${cleaned(resourceType)} carries no incident: no alert event`,
      });
    });

    // ---- a raw NUL byte, not an escape ----

    it("a form body holding a raw NUL byte: 202, raw_payload cleaned, the invocation payload as received", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "datadog");
      const fields = json("datadog", "default-template-triggered-p1.json");
      const form = new URLSearchParams({ ...fields, org: JSON.stringify(fields.org) }).toString();
      // URLSearchParams would escape it; a sender's template may not.
      const body = form.replace("High+tracking", `High${NUL}tracking`);
      expect(body).toContain(NUL);
      const response = await deliver(h, registration, body, {
        "content-type": "application/x-www-form-urlencoded",
      });
      const accepted = await expectAccepted(h, auth, registration, response);
      const alert = await readAlert(h, auth, accepted.alerts[0].id);
      expect(alert.title).toContain("High\ufffdtracking");
      expect(alert.raw_payload).toBe(cleaned(body));
      const { detail } = await readInvocation(h, auth, registration, response);
      expect(detail.payload).toBe(body);
    });

    it("a body with a byte that is not UTF-8: 202, raw_payload read as ingest read it, the body stored once", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager");
      const text = readFixture("alertmanager", "firing-single-critical.json").replace(
        '"receiver": "alert-ingest-webhook"',
        '"receiver": "alert-ingest@webhook"',
      );
      // 0xff is never part of UTF-8: it is read as U+FFFD, as a browser or any decoder reads it.
      const bytes = Buffer.from(text, "utf8");
      bytes[text.indexOf("@")] = 0xff;
      const response = await h.vigil.app.inject({
        method: "POST",
        url: registration.triggerPath,
        headers: { "content-type": "application/json" },
        payload: bytes,
      });
      const accepted = await expectAccepted(h, auth, registration, response);
      const alert = await readAlert(h, auth, accepted.alerts[0].id);
      expect(alert.raw_payload).toBe(text.replace("@", "\ufffd"));
      expect(alert.raw_payload).toBe(bytes.toString("utf8"));
      // The body is the invocation record's payload, as received: not copied again for the alerts.
      const { detail } = await readInvocation(h, auth, registration, response);
      expect(Buffer.from(detail.payload, "utf8").includes(0xff)).toBe(false);
      const { rows } = await h.vigil.services.database.db.execute(
        sql`select count(*)::int as n from alert_payloads`,
      );
      expect(rows[0]).toEqual({ n: 0 });
    });

    // ---- a header value ----

    it("a header value holding both: 202, the recorded headers cleaned", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "pagerduty");
      // An HTTP/1 parser refuses U+0000 in a header; the record is cleaned whatever brought the request.
      const response = await deliver(h, registration, readFixture("pagerduty", "incident-triggered.json"), {
        "content-type": "application/json",
        "x-monitor": `edge${NUL}proxy${HIGH}`,
      });
      await expectAccepted(h, auth, registration, response);
      const { detail } = await readInvocation(h, auth, registration, response);
      expect(detail.headers["x-monitor"]).toBe("edge\ufffdproxy\ufffd");
    });

    // ---- pulled, not pushed: an Alertmanager API answer ----

    it("an Alertmanager API answer holding both, pulled by a sync: the alert stored cleaned", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const startsAt = "2024-05-14T10:00:00.000Z";
      const listed = [
        {
          labels: { alertname: `Disk${NUL}Full`, [`te${HIGH}am`]: `pay${LOW}ments`, severity: "critical" },
          annotations: { summary: `nul ${NUL} and ${HIGH} here` },
          startsAt,
          endsAt: "2024-05-14T11:00:00.000Z",
          updatedAt: startsAt,
          fingerprint: "0123456789abcdef",
          status: { state: "active", silencedBy: [], inhibitedBy: [] },
          receivers: [{ name: "vigil" }],
          generatorURL: "http://prometheus.example:9090/graph?g0.expr=up",
        },
      ];
      let answer = JSON.stringify(listed);
      const server = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "application/json" }).end(answer);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const name = `am-${++registrations}`;
        const created = await h.vigil.app.inject({
          method: "POST",
          url: "/api/v1/integrations",
          headers: auth,
          payload: {
            type: "alertmanager",
            name,
            url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          },
        });
        expect(created.statusCode, created.body).toBe(201);
        const sync = () =>
          h.vigil.app.inject({
            method: "POST",
            url: `/app/sre/api/v1/integrations/${name}/sync`,
            headers: auth,
          });
        const first = await sync();
        expect(first.statusCode, first.body).toBe(200);
        expect(first.json(), first.body).toMatchObject({
          status: "completed",
          counts: { fetched: 1, created: 1 },
        });
        const alert = await readAlert(h, auth, "0123456789abcdef");
        expect(alert).toMatchObject({
          title: "Disk\ufffdFull",
          description: "nul \ufffd and \ufffd here",
          labels: { alertname: "Disk\ufffdFull", "te\ufffdam": "pay\ufffdments", severity: "critical" },
          ingested_via: "pull",
          // Its own item of the answer, as JSON text (which writes the NUL and the surrogates as escapes).
          raw_payload: JSON.stringify(listed[0]),
        });
        // The next sync sees the same alert, not a changed one.
        const second = await sync();
        expect(second.json()).toMatchObject({ status: "completed", counts: { fetched: 1, unchanged: 1 } });
        // An answer that is not JSON, with a raw NUL byte: the run fails and says why, readably.
        answer = `{${NUL}not json`;
        const failed = await sync();
        expect(failed.statusCode, failed.body).toBe(200);
        expect(failed.json()).toMatchObject({ status: "failed" });
        expect(unstorablePaths(failed.json())).toEqual([]);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    // ---- any field of any source ----

    it.each(SOURCE_TYPES)(
      "%s: every fixture with every string poisoned is accepted or refused, never lost",
      async (source) => {
        const h = harness();
        const { auth } = await h.createKey();
        let alertsRead = 0;
        for (const file of fixtureFiles(source)) {
          const fixture = json(source, file);
          const leaves = leafCount(fixture);
          // Every leaf at once refuses many bodies (their type fields no longer match); the leaves that
          // keep the body readable on their own, all at once, reach the alerts.
          const clean = parse(source, JSON.stringify(fixture));
          const eventCount = clean.ok ? clean.events.length : -1;
          const harmless = new Set<number>();
          for (let leaf = 0; leaf < leaves; leaf++) {
            const alone = parse(source, JSON.stringify(poisonLeaves(fixture, (n) => n === leaf)));
            if (alone.ok && alone.events.length === eventCount) harmless.add(leaf);
          }
          // Most of a fixture's text is not structure: the check below is not an empty one.
          expect(harmless.size, `${source}/${file}`).toBeGreaterThan(leaves / 2);
          const variants = [
            JSON.stringify(poisonLeaves(fixture, () => true)),
            JSON.stringify(poisonLeaves(fixture, (n) => harmless.has(n))),
          ];
          for (const body of variants) {
            const registration = await register(h, auth, source);
            const parsed = parse(source, body);
            const response = await deliver(h, registration, body);
            const label = `${source}/${file}`;
            if (!parsed.ok) {
              await expectRefused(h, auth, registration, response, `${source}: ${cleaned(parsed.error)}`);
              continue;
            }
            const accepted = await expectAccepted(h, auth, registration, response);
            expect(accepted.events, label).toBe(parsed.events.length);
            for (const [n, result] of (accepted.alerts as { id: string; external_uid: string }[]).entries()) {
              const event = parsed.events[n] as AlertEvent;
              const alert = await readAlert(h, auth, result.id);
              alertsRead += 1;
              expect(unstorablePaths(alert), label).toEqual([]);
              expect(alert.raw_payload, label).toBe(body);
              const wanted = cleanedValue(event);
              expect({ label, ...alert }).toMatchObject({
                label,
                external_uid: wanted.external_uid,
                title: wanted.title,
                description: wanted.description,
                source_severity: wanted.source_severity,
                labels: wanted.labels,
                links: wanted.links,
              });
            }
          }
        }
        expect(alertsRead).toBeGreaterThan(0);
      },
    );
  },
  // No workers: nothing runs in the background (an SNS confirmation would call out). The sync calls
  // the test's own Alertmanager API on loopback.
  { role: "api", integrationAllowedHosts: ["127.0.0.1"] },
);
