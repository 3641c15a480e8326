// Group commit through the real trigger and database: deliveries that arrive while earlier ones are
// being written share a transaction, and a group whose transaction fails is run again one delivery
// at a time, so one bad delivery cannot take the others down with it.
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachEngine, type Harness, waitFor } from "../../test/harness.ts";
import type { Tx } from "../core/db/database.ts";
import type { BatchedTarget, TargetResult, WebhookTarget } from "./targets.ts";
import { triggerWebhook, webhookOfToken } from "./trigger.ts";
import { createWebhook } from "./webhooks.ts";

/** A webhook whose target takes the batched path with this `apply`, and a sender of bodies to it. */
async function batchedWebhook(
  vigil: Harness["vigil"],
  name: string,
  apply: (tx: Tx, bodies: string[]) => Promise<TargetResult[]>,
) {
  const { services, log } = vigil;
  const webhook = await createWebhook(services.database.db, services.secrets, {
    tenant: { orgId: null, ownerId: randomUUID() },
    name,
    targetType: "test-batch",
    targetName: "echo",
    now: new Date(),
  });
  const row = await webhookOfToken(services, services.secrets.decrypt(webhook.tokenSealed));
  const batch: BatchedTarget<string> = {
    prepare: async ({ body }) => ({ status: "prepared", work: body }),
    apply: (tx, bodies) => apply(tx, bodies),
  };
  const target: WebhookTarget = Object.assign(
    async () => {
      throw new Error("the trigger must use the batched path");
    },
    { batch: batch as BatchedTarget<unknown> },
  );
  const send = (body: Buffer) =>
    triggerWebhook({
      services,
      targets: { "test-batch": target },
      request: { webhook: row, orgId: null, body, headers: {} },
      log,
    });
  return { webhook, send };
}

/** A promise that holds whoever awaits it until `open()`. */
function gate() {
  let open: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { closed, open };
}

describeEachEngine(
  "group commit of a batched webhook target",
  (harness) => {
    it("lands the other deliveries of a failed group, and records the bad one as an error", async () => {
      const h = harness();
      const held = gate();
      const groups: string[][] = [];
      const { webhook, send: sendBytes } = await batchedWebhook(
        h.vigil,
        "group-commit",
        async (tx, bodies) => {
          groups.push(bodies);
          await tx.execute(sql`select 1`);
          // Hold every running group until all deliveries are submitted, so the last ones queue.
          if (bodies.some((body) => body.startsWith("block"))) await held.closed;
          if (bodies.includes("poison")) throw new Error("poisoned");
          return bodies.map((body) => ({ status: "accepted" as const, response: { echoed: body } }));
        },
      );
      const send = (body: string) => sendBytes(Buffer.from(body));
      const blockers = ["block-1", "block-2", "block-3", "block-4"].map(send);
      // The blockers, sent in one turn of the event loop, go together and hold their commit; these
      // three wait for it.
      await waitFor(async () => groups.flat().length >= 1 || undefined);
      const queued = ["poison", "good-1", "good-2"].map(send);
      held.open();
      const results = await Promise.allSettled([...blockers, ...queued]);

      expect(results.map((result) => result.status)).toEqual([
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "fulfilled",
        "rejected",
        "fulfilled",
        "fulfilled",
      ]);
      expect((results[4] as PromiseRejectedResult).reason.message).toBe("poisoned");
      expect((results[5] as PromiseFulfilledResult<{ echoed?: unknown }>).value.echoed).toBe("good-1");
      // The queued three went together, failed, and each ran again alone. A blocker prepared late (a
      // loaded machine) may run in a group of its own at any point, or with them: only the groups
      // without one are in a fixed order.
      const together = groups.find((group) => group.includes("poison") && group.includes("good-1"));
      expect(together).toEqual(expect.arrayContaining(["poison", "good-1", "good-2"]));
      const withoutBlockers = groups.filter((group) => !group.some((body) => body.startsWith("block")));
      expect(withoutBlockers.slice(-3)).toEqual([["poison"], ["good-1"], ["good-2"]]);

      const { rows } = await h.vigil.services.database.db.execute(sql`
        select convert_from(payload, 'UTF8') as body, status from webhook_invocations
        where webhook_id = ${webhook.id} order by body`);
      expect(rows.map((row) => [row.body, row.status])).toEqual([
        ["block-1", "accepted"],
        ["block-2", "accepted"],
        ["block-3", "accepted"],
        ["block-4", "accepted"],
        ["good-1", "accepted"],
        ["good-2", "accepted"],
        ["poison", "error"],
      ]);
    });

    it("stores each body of a group byte for byte: binary, empty, and multi-byte text", async () => {
      const h = harness();
      const held = gate();
      const groups: number[] = [];
      const { webhook, send } = await batchedWebhook(h.vigil, "group-bytes", async (tx, bodies) => {
        groups.push(bodies.length);
        await tx.execute(sql`select 1`);
        if (bodies.includes("block")) await held.closed;
        return bodies.map(() => ({ status: "accepted" as const, response: {} }));
      });
      const blocker = send(Buffer.from("block"));
      await waitFor(async () => groups.length >= 1 || undefined);
      // Every byte value, bytes that are not UTF-8, nothing, and text of two- to four-byte characters.
      const bodies = [
        Buffer.from(Array.from({ length: 256 }, (_, n) => n)),
        Buffer.from([0xff, 0xfe, 0x00, 0xc3]),
        Buffer.alloc(0),
        Buffer.from("caf\u00e9 \u2603 \u{1f525}", "utf8"),
      ];
      const queued = bodies.map(send);
      held.open();
      await blocker;
      const accepted = await Promise.all(queued);
      expect(groups).toContain(bodies.length);

      const { rows } = await h.vigil.services.database.db.execute(sql`
        select id, payload, payload_bytes from webhook_invocations where webhook_id = ${webhook.id}`);
      const stored = new Map(rows.map((row) => [String(row.id), row]));
      bodies.forEach((body, n) => {
        const row = stored.get(accepted[n]?.invocation_id as string);
        expect(Buffer.from(row?.payload as Uint8Array).equals(body), `body ${n}`).toBe(true);
        expect(row?.payload_bytes).toBe(body.length);
      });
    });
  },
  { role: "api" },
);
