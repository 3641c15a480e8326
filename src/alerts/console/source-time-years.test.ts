// A source's times in every year Vigil keeps (docs/alert-sources.md: 0001-01-02 to 9999-12-30) read
// back as sent: getAlertV1 (drizzle's columns) and listAlerts (formatted in SQL) agree, and a later
// change of the alert through ingest (which reads the stored row back) writes the times unchanged.
// Years before 100 are the trap: Date reads PostgreSQL's "0049-03-04 05:06:07+00" as 2049.
import { sql } from "drizzle-orm";
import { beforeAll, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../../test/alerts.ts";
import { type Auth, describeEachEngine, type Harness } from "../../../test/harness.ts";

/** Each case's trigger time, its resolve time an hour later, and its next firing an hour after that. */
const CASES = [
  ...["0001", "0049", "0050", "0099", "0100", "1999", "9999"].map((year) => ({
    startsAt: `${year}-03-04T05:06:07.089Z`,
    endsAt: `${year}-03-04T06:06:07.089Z`,
    refiredAt: `${year}-03-04T07:06:07.089Z`,
  })),
  // The first and last days kept.
  {
    startsAt: "0001-01-02T00:00:00.000Z",
    endsAt: "0001-01-02T01:00:00.000Z",
    refiredAt: "0001-01-02T02:00:00.000Z",
  },
  {
    startsAt: "9999-12-30T21:59:59.999Z",
    endsAt: "9999-12-30T22:59:59.999Z",
    refiredAt: "9999-12-30T23:59:59.999Z",
  },
];

type Version = "fired" | "relabelled" | "resolved" | "refired";

/** One Alertmanager body with every case: fired, fired again with another label, resolved, fired anew. */
function bodyOf(version: Version) {
  return amBody(
    CASES.map(({ startsAt, endsAt, refiredAt }, index) => ({
      status: version === "resolved" ? "resolved" : "firing",
      fingerprint: `year-${index}`,
      startsAt: version === "refired" ? refiredAt : startsAt,
      endsAt: version === "resolved" ? endsAt : undefined,
      labels: {
        alertname: `Year${index}`,
        severity: "warning",
        ...(version === "fired" ? {} : { team: "history" }),
      },
    })),
  );
}

/** The alert's times as stored, in toISOString's form. */
const STORED_TIMES = sql.raw(
  ["triggered_at", "resolved_at", "last_resolved_at", "last_status_change_at"]
    .map((column) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ${column}`)
    .join(", "),
);

describeEachEngine("source times in every year", (harness) => {
  let auth: Auth;
  let url: string;
  let ids: string[];

  beforeAll(async () => {
    const h: Harness = harness();
    ({ auth } = await h.createKey());
    url = await registerTrigger(h, auth, { source: "alertmanager", integration: "years" });
  });

  /** Each alert's times as stored. */
  async function storedTimesOf(alertIds: string[]) {
    const { db } = harness().vigil.services.database;
    const times = [];
    for (const id of alertIds) {
      const { rows } = await db.execute(sql`select ${STORED_TIMES} from alerts where id = ${id}`);
      times.push(rows[0]);
    }
    return times;
  }

  /** getAlertV1 of each alert, each checked against listAlerts' entry for it. */
  async function readEach(alertIds: string[], status: "active" | "resolved") {
    const h = harness();
    const response = await h.vigil.app.inject({
      url: `/app/sre/api/v1/alerts?status=${status}&page_size=500`,
      headers: auth,
    });
    expect(response.statusCode, response.body).toBe(200);
    const listed = new Map(response.json().alerts.map((alert: { id: string }) => [alert.id, alert]));
    const read = [];
    for (const id of alertIds) {
      const alert = await readAlert(h, auth, id);
      expect(listed.get(id), alert.triggered_at).toEqual(alert);
      read.push(alert);
    }
    return read;
  }

  it("shows each trigger time as sent, in getAlertV1 as in the list", async () => {
    ids = await deliverIds(harness(), url, bodyOf("fired"));
    const read = await readEach(ids, "active");
    expect(read.map((alert) => [alert.triggered_at, alert.resolved_at])).toEqual(
      CASES.map(({ startsAt }) => [startsAt, null]),
    );
    expect(await storedTimesOf(ids)).toEqual(
      CASES.map(({ startsAt }) => ({
        triggered_at: startsAt,
        resolved_at: null,
        last_resolved_at: null,
        last_status_change_at: startsAt,
      })),
    );
  });

  it("keeps the stored times through a label change, a resolve and a new firing", async () => {
    const h = harness();
    expect(await deliverIds(h, url, bodyOf("relabelled"))).toEqual(ids);
    for (const id of ids) expect((await readAlert(h, auth, id)).labels).toMatchObject({ team: "history" });
    expect((await storedTimesOf(ids)).map((times) => times?.triggered_at)).toEqual(
      CASES.map(({ startsAt }) => startsAt),
    );
    expect(await deliverIds(h, url, bodyOf("resolved"))).toEqual(ids);
    expect(await storedTimesOf(ids)).toEqual(
      CASES.map(({ startsAt, endsAt }) => ({
        triggered_at: startsAt,
        resolved_at: endsAt,
        last_resolved_at: null,
        last_status_change_at: endsAt,
      })),
    );
    const resolved = await readEach(ids, "resolved");
    expect(resolved.map((alert) => [alert.triggered_at, alert.resolved_at])).toEqual(
      CASES.map(({ startsAt, endsAt }) => [startsAt, endsAt]),
    );
    expect(await deliverIds(h, url, bodyOf("refired"))).toEqual(ids);
    expect(await storedTimesOf(ids)).toEqual(
      CASES.map(({ endsAt, refiredAt }) => ({
        triggered_at: refiredAt,
        resolved_at: null,
        last_resolved_at: endsAt,
        last_status_change_at: refiredAt,
      })),
    );
    const refired = await readEach(ids, "active");
    expect(refired.map((alert) => [alert.triggered_at, alert.resolved_at, alert.last_resolved_at])).toEqual(
      CASES.map(({ endsAt, refiredAt }) => [refiredAt, null, endsAt]),
    );
  });

  // An alert stored before timelines were kept (migration 0006 left theirs null): ingest takes its
  // times from the row it reads back, so a time misread there is written back by the next change.
  it("keeps the times of an alert stored without a timeline through its next changes", async () => {
    const h = harness();
    const { db } = h.vigil.services.database;
    const oldUrl = await registerTrigger(h, auth, { source: "alertmanager", integration: "years-untimed" });
    const oldIds = await deliverIds(h, oldUrl, bodyOf("fired"));
    for (const id of oldIds) await db.execute(sql`update alerts set timeline = null where id = ${id}`);
    expect(await deliverIds(h, oldUrl, bodyOf("relabelled"))).toEqual(oldIds);
    expect(await storedTimesOf(oldIds)).toEqual(
      CASES.map(({ startsAt }) => ({
        triggered_at: startsAt,
        resolved_at: null,
        last_resolved_at: null,
        last_status_change_at: startsAt,
      })),
    );
    for (const id of oldIds) await db.execute(sql`update alerts set timeline = null where id = ${id}`);
    expect(await deliverIds(h, oldUrl, bodyOf("resolved"))).toEqual(oldIds);
    expect(await storedTimesOf(oldIds)).toEqual(
      CASES.map(({ startsAt, endsAt }) => ({
        triggered_at: startsAt,
        resolved_at: endsAt,
        last_resolved_at: null,
        last_status_change_at: endsAt,
      })),
    );
    const resolved = await readEach(oldIds, "resolved");
    expect(resolved.map((alert) => [alert.triggered_at, alert.resolved_at, alert.labels.team])).toEqual(
      CASES.map(({ startsAt, endsAt }) => [startsAt, endsAt, "history"]),
    );
  });
});
