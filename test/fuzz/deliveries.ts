// The deliveries area: every fixture of every source, changed at one place or swept whole, posted
// to the source's registration, a few at once so group commit mixes good and bad deliveries. A 202
// must read back: every alert it names, and the invocation among the webhook's runs. Agent and
// workflow webhooks get the same treatment, their run read back by invocation, run id and trace.
import fc from "fast-check";
import type { SourceType } from "../../src/alerts/sources/index.ts";
import type { Finding, FuzzClient, FuzzRequest, FuzzResponse } from "./client.ts";
import {
  objectsOf,
  parseDoc,
  renameKey,
  SWEEPS,
  type Sweep,
  serializeDoc,
  setAt,
  slotsOf,
  sweep,
} from "./doc.ts";
import {
  contentTypeArb,
  type Evil,
  encodeParam,
  evilKey,
  evilValue,
  Long,
  mutateText,
  type TextOp,
  textOp,
  toJsonText,
} from "./evil.ts";
import type { NamedHook, Registration } from "./resources.ts";
import { sourceHeaders } from "./resources.ts";
import { type Budget, fuzz, thrown } from "./runner.ts";

const TRIGGER = "/platform/api/v1/webhooks/trigger";

const TOKEN_CHANGES = [
  "missing",
  "wrong",
  "nul",
  "surrogate",
  "repeated",
  "bearer-header",
  "wrong-query-right-header",
  "long",
  "prototype",
  "empty",
  "org-unknown",
  "org-not-uuid",
  "org-nul",
] as const;
type TokenChange = (typeof TOKEN_CHANGES)[number];

export type DeliveryMutation =
  | { kind: "none" }
  | { kind: "value"; slot: number; value: Evil }
  | { kind: "drop"; slot: number }
  | { kind: "add-key"; target: number; key: string; value: Evil }
  | { kind: "rename-key"; target: number; key: string }
  | { kind: "sweep"; sweep: Sweep }
  | { kind: "text"; op: TextOp }
  | { kind: "content-type"; value: string | null }
  | { kind: "sns-type"; value: string }
  | { kind: "token"; change: TokenChange }
  | { kind: "oversized" };

export interface Delivery {
  fixture: number;
  mutation: DeliveryMutation;
}

export const deliveryMutation: fc.Arbitrary<DeliveryMutation> = fc.oneof(
  { arbitrary: fc.constant({ kind: "none" as const }), weight: 1 },
  {
    arbitrary: fc
      .record({ slot: fc.nat(400), value: evilValue })
      .map((m) => ({ kind: "value" as const, ...m })),
    weight: 10,
  },
  { arbitrary: fc.nat(400).map((slot) => ({ kind: "drop" as const, slot })), weight: 2 },
  {
    arbitrary: fc
      .record({ target: fc.nat(100), key: evilKey, value: evilValue })
      .map((m) => ({ kind: "add-key" as const, ...m })),
    weight: 5,
  },
  {
    arbitrary: fc
      .record({ target: fc.nat(100), key: evilKey })
      .map((m) => ({ kind: "rename-key" as const, ...m })),
    weight: 3,
  },
  {
    arbitrary: fc.constantFrom(...SWEEPS).map((kind) => ({ kind: "sweep" as const, sweep: kind })),
    weight: 6,
  },
  { arbitrary: textOp.map((op) => ({ kind: "text" as const, op })), weight: 4 },
  { arbitrary: contentTypeArb.map((value) => ({ kind: "content-type" as const, value })), weight: 2 },
  {
    arbitrary: fc
      .constantFrom("SubscriptionConfirmation", "UnsubscribeConfirmation", "Garbage", "", "__proto__")
      .map((value) => ({ kind: "sns-type" as const, value })),
    weight: 1,
  },
  {
    arbitrary: fc.constantFrom(...TOKEN_CHANGES).map((change) => ({ kind: "token" as const, change })),
    weight: 2,
  },
  { arbitrary: fc.constant({ kind: "oversized" as const }), weight: 1 },
);

/** Where a delivery goes: an alert registration, or a named webhook. */
export interface Target {
  name: string;
  token: string;
  webhookId: string;
  source: SourceType | null;
  fixtures: { name: string; body: string }[];
}

export function registrationTarget(
  registration: Registration,
  fixtures: { name: string; body: string }[],
): Target {
  return {
    name: registration.source,
    token: registration.token,
    webhookId: registration.id,
    source: registration.source,
    fixtures,
  };
}

export function hookTarget(hook: NamedHook, fixtures: { name: string; body: string }[]): Target {
  return { name: `${hook.target}-hook`, token: hook.token, webhookId: hook.id, source: null, fixtures };
}

function label(fixture: string, mutation: DeliveryMutation): string {
  const detail =
    mutation.kind === "sweep"
      ? mutation.sweep
      : mutation.kind === "text"
        ? mutation.op.op
        : mutation.kind === "token"
          ? mutation.change
          : mutation.kind === "add-key" || mutation.kind === "rename-key"
            ? JSON.stringify(mutation.key).slice(0, 40)
            : mutation.kind === "content-type" || mutation.kind === "sns-type"
              ? JSON.stringify(mutation.value)
              : "";
  return `${fixture}: ${mutation.kind}${detail ? ` ${detail}` : ""}`;
}

/** The request of one delivery: the fixture with its one change. */
export function deliveryRequest(target: Target, delivery: Delivery, limitBytes: number): FuzzRequest {
  const fixture = target.fixtures[delivery.fixture % target.fixtures.length] as {
    name: string;
    body: string;
  };
  const { mutation } = delivery;
  const headers: Record<string, string> = target.source
    ? sourceHeaders(target.source, fixture.body)
    : { "content-type": "application/json" };
  const query: string[] = [`apiKey=${encodeURIComponent(target.token)}`];
  let body: Buffer = Buffer.from(fixture.body, "utf8");
  const doc = () => parseDoc(fixture.body);

  switch (mutation.kind) {
    case "none":
      break;
    case "value":
    case "drop": {
      const tree = doc();
      const slots = slotsOf(tree);
      const slot = slots[mutation.slot % Math.max(slots.length, 1)];
      if (slot) {
        if (mutation.kind === "value") setAt(slot, mutation.value);
        else if (Array.isArray(slot.parent)) slot.parent.splice(Number(slot.key), 1);
        else delete slot.parent[slot.key as string];
      }
      body = Buffer.from(serializeDoc(tree), "utf8");
      break;
    }
    case "add-key":
    case "rename-key": {
      const tree = doc();
      const objects = objectsOf(tree).filter(
        (object) => mutation.kind === "add-key" || Object.keys(object).length > 0,
      );
      const target = objects[mutation.target % Math.max(objects.length, 1)];
      if (target && mutation.kind === "add-key") setAt({ parent: target, key: mutation.key }, mutation.value);
      else if (target && mutation.kind === "rename-key") {
        const keys = Object.keys(target);
        renameKey(target, keys[mutation.target % keys.length] as string, mutation.key);
      }
      body = Buffer.from(serializeDoc(tree), "utf8");
      break;
    }
    case "sweep":
      body = Buffer.from(serializeDoc(sweep(doc(), mutation.sweep)), "utf8");
      break;
    case "text":
      body = mutateText(fixture.body, mutation.op);
      break;
    case "content-type":
      if (mutation.value === null) delete headers["content-type"];
      else headers["content-type"] = mutation.value;
      break;
    case "sns-type":
      headers["x-amz-sns-message-type"] = mutation.value;
      break;
    case "oversized": {
      // Just over the limit, as one long label: 413, recorded nowhere.
      const tree = doc();
      const padding = new Long(limitBytes + 1, "x");
      const objects = objectsOf(tree);
      if (objects[0]) setAt({ parent: objects[0], key: "padding" }, padding);
      body = Buffer.from(objects[0] ? serializeDoc(tree) : toJsonText(padding), "utf8");
      break;
    }
    case "token":
      switch (mutation.change) {
        case "missing":
          query.length = 0;
          break;
        case "wrong":
          query[0] = "apiKey=whk_0000000000000000000000000000000000000000";
          break;
        case "nul":
          query[0] += "%00";
          break;
        case "surrogate":
          query[0] += encodeParam("\ud800");
          break;
        case "repeated":
          query.push(query[0] as string);
          break;
        case "bearer-header":
          query.length = 0;
          headers.authorization = `Bearer ${target.token}`;
          break;
        case "wrong-query-right-header":
          query[0] = "apiKey=whk_wrong";
          headers.authorization = `Bearer ${target.token}`;
          break;
        case "long":
          query[0] = `apiKey=${"k".repeat(20_000)}`;
          break;
        case "prototype":
          query[0] = "apiKey=__proto__";
          query.push("__proto__=x", "constructor[prototype][polluted]=1");
          break;
        case "empty":
          query[0] = "apiKey=";
          break;
        case "org-unknown":
          query.push("orgId=00000000-0000-4000-8000-000000000000");
          break;
        case "org-not-uuid":
          query.push("orgId=1e30");
          break;
        case "org-nul":
          query.push("orgId=%00");
          break;
      }
      break;
  }
  const url = query.length > 0 ? `${TRIGGER}?${query.join("&")}` : TRIGGER;
  return { method: "POST", url, headers, body, mutation: label(fixture.name, mutation) };
}

interface Accepted {
  webhook_id?: string;
  invocation_id?: string;
  alerts?: { id?: string }[];
  session_id?: string;
  trace_id?: string;
  run_id?: string;
}

/**
 * Reads back what a 202 (or a recorded refusal) names: each alert (and the first one's history when
 * `history`), the run and trace of a run. The invocation is looked for in the webhook's runs by
 * the caller, once per batch. The first thing that does not read back, or null.
 */
async function readBack(
  client: FuzzClient,
  auth: Record<string, string>,
  target: Target,
  request: FuzzRequest,
  response: FuzzResponse,
  history: boolean,
): Promise<Finding | null> {
  const area = "read-back";
  const get = (url: string) =>
    client.send(area, { method: "GET", url, headers: auth, mutation: "read-back" });
  const problem = (detail: string, answer: FuzzResponse) =>
    client.report("read-back", area, target.name, request, answer, detail);
  let accepted: Accepted;
  try {
    accepted = response.json() as Accepted;
  } catch {
    return problem(`answer ${response.status} is not JSON`, response);
  }
  if (response.status !== 202) {
    // A refusal after the token was accepted names the recorded invocation: it must read back too.
    const extras = (accepted as { extras?: { invocation_id?: string; webhook_id?: string }[] }).extras?.[0];
    if (!extras?.invocation_id || !extras.webhook_id) return null;
    const run = await get(`/platform/api/v1/webhooks/${extras.webhook_id}/runs/${extras.invocation_id}`);
    if (run.status !== 200) {
      return problem(`refused delivery's run ${extras.invocation_id} answered ${run.status}`, run);
    }
    return null;
  }
  if (!accepted.webhook_id || !accepted.invocation_id) {
    return problem("202 without webhook_id and invocation_id", response);
  }
  for (const [n, alert] of (accepted.alerts ?? []).entries()) {
    if (!alert.id) return problem("202 names an alert without id", response);
    const read = await get(`/app/sre/api/v1/alerts/${encodeURIComponent(alert.id)}`);
    if (read.status !== 200)
      return problem(`alert ${alert.id} named by the 202 answered ${read.status}`, read);
    if ((read.json() as { id?: string }).id !== alert.id) {
      return problem(`alert ${alert.id} read back as another`, read);
    }
    if (n > 0 || !history) continue;
    const events = await get(`/app/sre/api/v1/alerts/${encodeURIComponent(alert.id)}/history`);
    if (events.status !== 200)
      return problem(`history of alert ${alert.id} answered ${events.status}`, events);
  }
  if (accepted.run_id) {
    const byRun = await get(
      `/platform/api/v1/webhooks/${accepted.webhook_id}/runs/${encodeURIComponent(accepted.run_id)}`,
    );
    if (byRun.status !== 200) return problem(`run ${accepted.run_id} answered ${byRun.status}`, byRun);
  }
  if (accepted.trace_id) {
    const trace = await get(`/platform/api/v1/executions/${encodeURIComponent(accepted.trace_id)}`);
    if (trace.status !== 200) return problem(`trace ${accepted.trace_id} answered ${trace.status}`, trace);
  }
  return null;
}

/** Every invocation a 202 of the batch named must be among the webhook's newest runs, accepted. */
async function readRuns(
  client: FuzzClient,
  auth: Record<string, string>,
  target: Target,
  accepted: { request: FuzzRequest; invocationId: string }[],
): Promise<Finding | null> {
  if (accepted.length === 0) return null;
  const url = `/platform/api/v1/webhooks/${target.webhookId}/runs?limit=10`;
  const answer = await client.send("read-back", { method: "GET", url, headers: auth, mutation: "read-back" });
  const first = accepted[0] as { request: FuzzRequest };
  if (answer.status !== 200) {
    return client.report(
      "read-back",
      "read-back",
      target.name,
      first.request,
      answer,
      `the webhook's runs answered ${answer.status}`,
    );
  }
  const runs = (answer.json() as { runs?: { invocation_id?: string; status?: string }[] }).runs ?? [];
  for (const { request, invocationId } of accepted) {
    const run = runs.find((item) => item.invocation_id === invocationId);
    if (!run) {
      return client.report(
        "read-back",
        "read-back",
        target.name,
        request,
        answer,
        "the 202's invocation is not among the webhook's runs",
      );
    }
    if (run.status !== "accepted") {
      return client.report(
        "read-back",
        "read-back",
        target.name,
        request,
        answer,
        `the 202's invocation is recorded as ${run.status}`,
      );
    }
  }
  return null;
}

/** The alert lists must still answer over whatever the deliveries stored. */
export async function readLists(
  client: FuzzClient,
  auth: Record<string, string>,
  source: string,
): Promise<Finding | null> {
  const urls = [
    ...["active", "resolved", "ignored"].map(
      (status) => `/app/sre/api/v1/alerts?status=${status}&page_size=500&source_type=${source}`,
    ),
    `/app/sre/api/v1/alerts?sort_by=impact&page_size=500`,
    `/app/sre/api/v1/alerts?q=${encodeParam("__proto__")}`,
    "/app/sre/api/v1/alerts/categorization/summary",
  ];
  for (const url of urls) {
    const request: FuzzRequest = { method: "GET", url, headers: auth, mutation: "list after deliveries" };
    const response = await client.send("read-back", request);
    if (response.status >= 500)
      return client.report(
        "5xx",
        "read-back",
        `list ${source}`,
        request,
        response,
        `list answered ${response.status}`,
      );
  }
  return null;
}

/**
 * The deliveries to make before the random batches, one each: every fixture at least once, and at
 * least `count` sweeps, starting at the `offset`-th (the short run spreads them over the targets).
 */
export function sweepExamples(count: number, offset: number, fixtures: number): Delivery[][] {
  const total = Math.max(Math.min(count, SWEEPS.length), fixtures);
  return Array.from({ length: total }, (_x, i) => [
    {
      fixture: i % fixtures,
      mutation: { kind: "sweep", sweep: SWEEPS[(offset + i) % SWEEPS.length] as Sweep },
    },
  ]);
}

/** Fuzzes one target: the sweeps given, then batches of one to three deliveries sent together. */
export async function fuzzTarget(
  client: FuzzClient,
  auth: Record<string, string>,
  target: Target,
  budget: Budget,
  limitBytes: number,
  sweeps: Delivery[][],
): Promise<number> {
  const area = `delivery ${target.name}`;
  const delivery = fc.record({ fixture: fc.nat(target.fixtures.length - 1), mutation: deliveryMutation });
  const check = async (batch: Delivery[]): Promise<Finding | null> => {
    const requests = batch.map((item) => deliveryRequest(target, item, limitBytes));
    let responses: FuzzResponse[];
    try {
      responses = await Promise.all(requests.map((request) => client.send(area, request)));
    } catch (err) {
      return client.report("crash", area, target.name, requests[0] as FuzzRequest, null, thrown(err));
    }
    const accepted: { request: FuzzRequest; invocationId: string }[] = [];
    for (const [i, response] of responses.entries()) {
      const request = requests[i] as FuzzRequest;
      if (response.status >= 500) {
        return client.report(
          "5xx",
          area,
          target.name,
          request,
          response,
          `delivery answered ${response.status}`,
        );
      }
      const problem = await readBack(client, auth, target, request, response, accepted.length === 0);
      if (problem) return problem;
      if (response.status === 202) {
        accepted.push({ request, invocationId: (response.json() as Accepted).invocation_id ?? "" });
      }
    }
    return readRuns(client, auth, target, accepted);
  };
  const { runs } = await fuzz(
    client,
    area,
    fc.array(delivery, { minLength: 1, maxLength: 3 }),
    check,
    budget,
    sweeps,
  );
  return runs;
}
