// The API area: one property per operation of the OpenAPI document. Each run builds the
// operation's valid-ish request (fresh victims for destructive operations), changes one part, and
// fails on a 5xx. A success that may have renamed or removed a shared row puts it back.
import type { Finding, FuzzClient } from "./client.ts";
import { Deep, type Evil, objectOf, Raw } from "./evil.ts";
import {
  type ApiMutation,
  baselineOf,
  buildRequest,
  mutationArb,
  type Operation,
  type Part,
  partsOf,
  type SchemaBook,
} from "./openapi.ts";
import type { Resources } from "./resources.ts";
import { type Budget, fuzz, thrown } from "./runner.ts";

/** Operations whose success may change the rows the walk aims at. */
const CHANGES_SHARED_ROWS = new Set([
  "updateIntegration",
  "updateAgent",
  "updateWorkflow",
  "updateWebhook",
  "updateAlertWebhook",
]);

export async function fuzzOperation(
  client: FuzzClient,
  book: SchemaBook,
  resources: Resources,
  op: Operation,
  budget: Budget,
): Promise<number> {
  const area = `api ${op.tag}`;
  const auth = resources.auth;
  // Parts come from a first baseline; each run makes its own (fresh names, fresh victims).
  const parts = partsOf(op, book, await baselineOf(op, book, resources));
  const check = async (mutation: ApiMutation): Promise<Finding | null> => {
    let request: ReturnType<typeof buildRequest> | null = null;
    try {
      const baseline = await baselineOf(op, book, resources);
      request = buildRequest(op, parts, baseline, mutation, auth);
      const response = await client.send(area, request);
      if (response.status >= 500) {
        return client.report(
          "5xx",
          area,
          op.id,
          request,
          response,
          `${op.method} ${op.path} answered ${response.status}`,
        );
      }
      if (response.status < 300 && op.method !== "GET")
        await afterSuccess(op, resources, response.json.bind(response));
      return null;
    } catch (err) {
      const shown = request ?? { method: op.method, url: op.path, mutation: "(not built)" };
      return client.report("crash", area, op.id, shown, null, `fuzzer error: ${thrown(err)}`);
    }
  };
  const { runs } = await fuzz(
    client,
    `api ${op.id}`,
    mutationArb(parts, book, op),
    check,
    budget,
    examplesFor(op, parts),
  );
  return runs;
}

const HUGE = ["9223372036854775808", "1e30", "2147483648"];
const TEXT: Evil[] = ["a\u0000b", "a\ud800", "__proto__", "\udc00", "constructor", "toString"];
const OTHER: () => Evil[] = () => [
  objectOf([
    ["__proto__", { polluted: "yes" }],
    ["constructor", { prototype: { polluted: "yes" } }],
    ["toString", "x"],
  ]) as Evil,
  "not the right type",
  new Deep(600, "object"),
  null,
];

/**
 * The runs every operation gets before the random ones, so that even the short run changes every
 * parameter and body field: the request unchanged; each integer part past PostgreSQL's integer
 * (9223372036854775808, 1e30, 2147483648 in turn); each text part with NUL, a lone surrogate or a
 * prototype name in turn; each other part with prototype keys, a wrong type, deep nesting or null;
 * prototype keys added at the body's root; an array 100 000 deep as the whole body.
 */
export function examplesFor(op: Operation, parts: Part[]): ApiMutation[] {
  const examples: ApiMutation[] = [{ kind: "none" }];
  const turn = { integer: 0, string: 0, other: 0 };
  parts.forEach((part, index) => {
    const type = part.schema?.type;
    let value: Evil;
    if (type === "integer") value = new Raw(HUGE[turn.integer++ % HUGE.length] as string);
    else if (type === "string") value = TEXT[turn.string++ % TEXT.length] as Evil;
    else value = OTHER()[turn.other++ % 4] as Evil;
    examples.push({ kind: "value", part: index, value });
  });
  if (op.body) {
    examples.push({ kind: "add-key", target: 0, key: "__proto__", value: { polluted: "yes" } });
    examples.push({
      kind: "add-key",
      target: 0,
      key: "constructor",
      value: { prototype: { polluted: "yes" } },
    });
    examples.push({ kind: "whole-body", value: new Deep(100_000, "array") });
  }
  return examples;
}

async function afterSuccess(op: Operation, resources: Resources, json: () => unknown): Promise<void> {
  if (op.id === "approveWorkflowVersion") {
    // The draft is approved now: the walk needs a new one for updateWorkflowVersion.
    const draft = await resources.call(
      "POST",
      `/platform/api/v1/workflows/${resources.workflow}/versions`,
      undefined,
      [201, 409],
    );
    if (draft.statusCode === 201)
      resources.draftVersion = (draft.json() as { draft_version: number }).draft_version;
  } else if (op.id === "createWorkflowVersion") {
    const created = json() as { draft_version?: number };
    if (created.draft_version) resources.draftVersion = created.draft_version;
  } else if (CHANGES_SHARED_ROWS.has(op.id)) {
    await resources.ensure();
  }
}

/** Operations in a fixed order, so a seed names the same requests on every run. */
export function sortedOperations(operations: Operation[]): Operation[] {
  return [...operations].sort((a, b) => a.id.localeCompare(b.id));
}
