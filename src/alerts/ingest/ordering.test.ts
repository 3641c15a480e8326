// One alert's events in any delivery order (alert-sources.md 1.10): Alertmanager bodies go through the
// real trigger URL, and the alert reads back through the API. Whatever the order, and however often
// an event is repeated, the alert must end as the same events leave it when delivered in time order,
// and that state must be the one the rule's timeline describes.
import fc from "fast-check";
import { expect, it } from "vitest";
import { amBody, deliverAlerts, readAlert, registerTrigger } from "../../../test/alerts.ts";
import { type Auth, describeEachEngine, type Harness } from "../../../test/harness.ts";

/** One alert of an Alertmanager webhook body: a firing (startsAt) or a resolve (startsAt, endsAt). */
interface AmEvent {
  status: "firing" | "resolved";
  startsAt: number;
  endsAt?: number;
}

function amEventBody(fingerprint: string, event: AmEvent): string {
  return amBody(
    [
      {
        status: event.status,
        fingerprint,
        startsAt: new Date(event.startsAt).toISOString(),
        endsAt: event.endsAt === undefined ? undefined : new Date(event.endsAt).toISOString(),
        // No cluster, service or host label: the alert stays out of storms, which these tests leave alone.
        labels: { alertname: "QueueBacklog", severity: "warning" },
        summary: "queue backlog above 10k",
      },
    ],
    {
      groupKey: '{}:{alertname="QueueBacklog"}',
      groupLabels: { alertname: "QueueBacklog" },
      generatorURL: "http://prometheus.example:9090/graph?g0.expr=up",
    },
  );
}

let fingerprints = 0;
/** A fresh 16-hex-digit fingerprint: every delivery sequence gets an alert of its own. */
function fingerprint(): string {
  fingerprints += 1;
  return `0d${fingerprints.toString(16).padStart(14, "0")}`;
}

/** Delivers the events in the order given; returns each delivery's outcome for the alert. */
async function deliverAll(h: Harness, triggerPath: string, uid: string, events: AmEvent[]) {
  const outcomes: string[] = [];
  for (const event of events) {
    const [alert] = await deliverAlerts(h, triggerPath, amEventBody(uid, event));
    outcomes.push(alert?.outcome as string);
  }
  return outcomes;
}

/** The alert's status fields as the API shows them. */
async function shown(h: Harness, auth: Auth, uid: string) {
  const alert = await readAlert(h, auth, uid);
  return {
    status: alert.status,
    triggered_at: alert.triggered_at,
    resolved_at: alert.resolved_at,
    refire_count: alert.refire_count,
    last_resolved_at: alert.last_resolved_at,
  };
}

/** Time order: a firing at its start, a resolve at its end; at one instant the firing first. */
function byTime(a: AmEvent, b: AmEvent): number {
  const time = (event: AmEvent) => (event.status === "firing" ? event.startsAt : (event.endsAt as number));
  return time(a) - time(b) || (a.status === b.status ? 0 : a.status === "firing" ? -1 : 1);
}

/**
 * The state alert-sources.md 1.10 describes, computed from its words rather than by the store's code:
 * the firing points (every start) and resolve points (every end) in time order, a firing point
 * first at one instant; the status is the last point's, a resolve run followed by a firing run is a
 * re-fire.
 */
function described(events: AmEvent[]) {
  const points = new Map<string, [number, "active" | "resolved"]>();
  for (const event of events) {
    points.set(`${event.startsAt}a`, [event.startsAt, "active"]);
    if (event.endsAt !== undefined) points.set(`${event.endsAt}r`, [event.endsAt, "resolved"]);
  }
  const sorted = [...points.values()].sort(
    ([a, kindA], [b, kindB]) => a - b || (kindA === kindB ? 0 : kindA === "active" ? -1 : 1),
  );
  const iso = (at: number) => new Date(at).toISOString();
  let refires = 0;
  let lastResolved: number | null = null;
  let lastFired = 0;
  sorted.forEach(([at, kind], index) => {
    if (kind !== "active") return;
    lastFired = at;
    const previous = sorted[index - 1];
    if (previous?.[1] === "resolved") {
      refires += 1;
      lastResolved = previous[0];
    }
  });
  const [lastAt, lastKind] = sorted.at(-1) as [number, string];
  return {
    status: lastKind,
    triggered_at: iso(lastFired),
    resolved_at: lastKind === "resolved" ? iso(lastAt) : null,
    refire_count: refires,
    last_resolved_at: lastResolved === null ? null : iso(lastResolved),
  };
}

const MINUTE = 60_000;
const BASE = Date.parse("2024-05-14T00:00:00.000Z");

/**
 * Episodes an hour apart; each starts somewhere in its hour and lasts 1 to 50 minutes. An episode
 * has its firing notification sent up to three times (Alertmanager's repeats carry the same
 * startsAt) and its resolve sent or not; a lost firing or a lost resolve is a real case too.
 */
const episodeArb = fc
  .record({
    offset: fc.integer({ min: 0, max: 9 }),
    length: fc.integer({ min: 1, max: 50 }),
    firings: fc.integer({ min: 0, max: 3 }),
    resolved: fc.boolean(),
  })
  .filter(({ firings, resolved }) => firings > 0 || resolved);

const scenarioArb = fc.array(episodeArb, { minLength: 1, maxLength: 4 }).chain((episodes) => {
  const events: AmEvent[] = episodes.flatMap(({ offset, length, firings, resolved }, n) => {
    const startsAt = BASE + n * 60 * MINUTE + offset * MINUTE;
    const firing: AmEvent = { status: "firing", startsAt };
    const resolve: AmEvent = { status: "resolved", startsAt, endsAt: startsAt + length * MINUTE };
    return [...Array.from({ length: firings }, () => firing), ...(resolved ? [resolve] : [])];
  });
  // The delivery: every event, a few of them once more (a sender's retry, a re-sent group), shuffled.
  return fc
    .subarray(events, { maxLength: Math.min(4, events.length) })
    .chain((again) => fc.shuffledSubarray([...events, ...again], { minLength: events.length + again.length }))
    .map((delivery) => ({ events, delivery }));
});

/** Fixed, so that a failure names a case that can be run again; bounded, so the property runs in seconds. */
const SEED = 1_714_000_000;
const RUNS = 25;

describeEachEngine("alert lifecycle in any delivery order", (harness) => {
  it("does not re-open a resolved episode whose firing arrives after a later episode's resolve", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const triggerPath = await registerTrigger(h, auth, { source: "alertmanager", integration: "ordering" });
    const uid = fingerprint();
    const at = (time: string) => Date.parse(`2024-05-14T${time}:00.000Z`);
    const outcomes = await deliverAll(h, triggerPath, uid, [
      { status: "resolved", startsAt: at("00:10"), endsAt: at("00:20") },
      { status: "resolved", startsAt: at("01:10"), endsAt: at("01:20") },
      { status: "firing", startsAt: at("01:10") },
    ]);
    // The second resolve records the later episode (it started after the first resolve: a re-fire);
    // its firing, started before that episode's recorded resolve, changes nothing.
    expect(outcomes).toEqual(["created", "updated", "stale"]);
    expect(await shown(h, auth, uid)).toEqual({
      status: "resolved",
      triggered_at: "2024-05-14T01:10:00.000Z",
      resolved_at: "2024-05-14T01:20:00.000Z",
      refire_count: 1,
      last_resolved_at: "2024-05-14T00:20:00.000Z",
    });
  });

  it(`ends in the time-order state whatever the delivery order (${RUNS} cases, seed ${SEED})`, async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const triggerPath = await registerTrigger(h, auth, { source: "alertmanager", integration: "ordering" });
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ events, delivery }) => {
        cases += 1;
        const inTimeOrder = fingerprint();
        await deliverAll(h, triggerPath, inTimeOrder, [...events].sort(byTime));
        const expected = await shown(h, auth, inTimeOrder);
        expect(expected).toEqual(described(events));
        const shuffled = fingerprint();
        await deliverAll(h, triggerPath, shuffled, delivery);
        expect({ delivery, state: await shown(h, auth, shuffled) }).toEqual({ delivery, state: expected });
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(cases).toBe(RUNS);
  });
});
