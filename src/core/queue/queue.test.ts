// The job queue on both engines: a job exists if and only if the transaction that sent it commits,
// a failing job is retried, and a backlog runs as many at a time as its job's concurrency.
import { Type } from "@sinclair/typebox";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { describeEachEngine, waitFor } from "../../../test/harness.ts";
import { defineJob } from "./catalog.ts";
import { installJobSchema } from "./queue.ts";

const ran: string[] = [];
const attempts = new Map<string, number>();

const recordJob = defineJob({
  name: "probe.record",
  schema: Type.Object({ marker: Type.String() }),
  handler: async ({ data }) => {
    ran.push(data.marker);
  },
});

const flakyJob = defineJob({
  name: "probe.flaky",
  schema: Type.Object({ marker: Type.String() }),
  retryLimit: 2,
  retryDelaySeconds: 1,
  retryBackoff: false,
  handler: async ({ data, attempt }) => {
    attempts.set(data.marker, attempt);
    if (attempt === 1) throw new Error("first attempt fails on purpose");
    ran.push(data.marker);
  },
});

// Jobs fetched five at a time and handled together; a marker starting with "fail" fails the merged
// run, so each of its jobs is retried alone.
const merged: string[][] = [];
const alone: { marker: string; attempt: number }[] = [];
const batchJob = defineJob({
  name: "probe.batch",
  schema: Type.Object({ marker: Type.String() }),
  retryLimit: 1,
  retryDelaySeconds: 1,
  retryBackoff: false,
  batchSize: 5,
  handler: async ({ data, attempt }) => {
    alone.push({ marker: data.marker, attempt });
  },
  handleMany: async ({ items }) => {
    const markers = items.map((item) => item.data.marker).sort();
    if (markers.some((marker) => marker.startsWith("fail"))) throw new Error("merged run fails on purpose");
    merged.push(markers);
  },
});

// Jobs held until the test releases them, three at a time, woken by NOTIFY (a worker with nothing
// to do polls only as a slow backstop).
const held = new Map<string, () => void>();
const finished: string[] = [];
let mostAtOnce = 0;
const heldJob = defineJob({
  name: "probe.held",
  schema: Type.Object({ marker: Type.String() }),
  retryLimit: 0,
  concurrency: 3,
  notify: true,
  notifyPollingSeconds: 30,
  handler: async ({ data }) => {
    await new Promise<void>((resolve) => {
      held.set(data.marker, () => {
        held.delete(data.marker);
        resolve();
      });
      mostAtOnce = Math.max(mostAtOnce, held.size);
    });
    finished.push(data.marker);
  },
});

// Jobs of a queue whose worker, woken by NOTIFY, fetches at most every SPACING_MS once a fetch came
// back short: when each fetch was handled, and which jobs it held.
const SPACING_MS = 400;
const spacedFetches: { at: number; markers: string[] }[] = [];
const spacedJob = defineJob({
  name: "probe.spaced",
  schema: Type.Object({ marker: Type.String() }),
  retryLimit: 0,
  notify: true,
  notifyPollingSeconds: 30,
  batchSize: 10,
  minFetchIntervalMs: SPACING_MS,
  handler: async ({ data }) => {
    spacedFetches.push({ at: performance.now(), markers: [data.marker] });
  },
  handleMany: async ({ items }) => {
    spacedFetches.push({ at: performance.now(), markers: items.map((item) => item.data.marker) });
  },
});

describeEachEngine(
  "job queue",
  (harness) => {
    const count = async (name: string, marker: string) => {
      const { rows } = await harness().vigil.services.database.db.execute(
        sql`select count(*)::int as n from pgboss.job where name = ${name} and data->>'marker' = ${marker}`,
      );
      return Number(rows[0]?.n);
    };

    it("gives a queue made earlier its job's current retry settings", async () => {
      const { database } = harness().vigil.services;
      const settings = async () => {
        const { rows } = await database.db.execute(
          sql`select retry_limit, retry_delay, retry_backoff from pgboss.queue where name = 'probe.flaky'`,
        );
        return rows[0];
      };
      // As started: the definition's 2 retries, 1 s apart, no backoff.
      expect(await settings()).toEqual({ retry_limit: 2, retry_delay: 1, retry_backoff: false });
      // A later release defines the job otherwise: installing its schema updates the queue.
      await installJobSchema(database, [
        { ...flakyJob, retryLimit: 5, retryDelaySeconds: 7, retryBackoff: true },
      ]);
      expect(await settings()).toEqual({ retry_limit: 5, retry_delay: 7, retry_backoff: true });
      await installJobSchema(database, [flakyJob]);
      expect(await settings()).toEqual({ retry_limit: 2, retry_delay: 1, retry_backoff: false });
    });

    it("retries a job whose worker stopped confirming it (its process died), long before its expiry", async () => {
      const { database, queue } = harness().vigil.services;
      const marker = `orphaned-${harness().engine}`;
      // Sent for later, then made to look taken by a worker that died five minutes ago.
      const id = await queue.enqueue(database.db, recordJob, { marker }, { startAfterSeconds: 3600 });
      await database.db.execute(sql`
        update pgboss.job set state = 'active', start_after = now(), started_on = now() - interval '5 minutes',
          heartbeat_on = now() - interval '5 minutes'
        where name = 'probe.record' and id = ${id}`);
      // The supervisor's pass, which each instance runs every minute.
      await queue.boss.supervise("probe.record");
      await waitFor(async () => (ran.includes(marker) ? true : undefined));
      const { rows } = await database.db.execute(
        sql`select retry_count from pgboss.job where name = 'probe.record' and id = ${id}`,
      );
      expect(rows[0]?.retry_count).toBe(1);
    });

    it("runs a job sent inside a transaction after the transaction commits", async () => {
      const { database, queue } = harness().vigil.services;
      const marker = `commit-${harness().engine}`;
      await database.db.transaction(async (tx) => {
        await queue.enqueue(tx, recordJob, { marker });
      });
      await waitFor(async () => (ran.includes(marker) ? true : undefined));
      expect(ran.filter((item) => item === marker)).toEqual([marker]);
    });

    it("never runs a job whose transaction rolled back", async () => {
      const { database, queue } = harness().vigil.services;
      const marker = `rollback-${harness().engine}`;
      const later = `after-rollback-${harness().engine}`;
      await expect(
        database.db.transaction(async (tx) => {
          await queue.enqueue(tx, recordJob, { marker });
          // PGlite has one connection, which the transaction holds; PostgreSQL can look from outside.
          if (harness().engine === "postgres") expect(await count("probe.record", marker)).toBe(0);
          throw new Error("roll back");
        }),
      ).rejects.toThrow("roll back");
      // A job sent after the rollback runs; by then the rolled-back one would have run too.
      await queue.enqueue(database.db, recordJob, { marker: later });
      await waitFor(async () => (ran.includes(later) ? true : undefined));
      expect(ran).not.toContain(marker);
      expect(await count("probe.record", marker)).toBe(0);
    });

    it("sends enqueueMany's jobs inside a pipelined transaction, before its COMMIT or ROLLBACK", async () => {
      const { database, queue } = harness().vigil.services;
      const kept = `many-kept-${harness().engine}`;
      const dropped = `many-dropped-${harness().engine}`;
      await database.transaction(async (tx) => {
        await queue.enqueueMany(tx, recordJob, [{ data: { marker: kept } }, { data: { marker: kept } }]);
      });
      await expect(
        database.transaction(async (tx) => {
          await queue.enqueueMany(tx, recordJob, [{ data: { marker: dropped } }]);
          throw new Error("roll back");
        }),
      ).rejects.toThrow("roll back");
      // Sent after the ROLLBACK, the insert would have committed on its own.
      expect(await count("probe.record", kept)).toBe(2);
      expect(await count("probe.record", dropped)).toBe(0);
    });

    it("retries a failing job", async () => {
      const { database, queue } = harness().vigil.services;
      const marker = `flaky-${harness().engine}`;
      await queue.enqueue(database.db, flakyJob, { marker });
      await waitFor(async () => (ran.includes(marker) ? true : undefined));
      expect(attempts.get(marker)).toBe(2);
    });

    it("handles the jobs of one fetch together, and retries each alone when that fails", async () => {
      const { database, queue } = harness().vigil.services;
      const engine = harness().engine;
      const ok = [1, 2, 3, 4, 5].map((n) => `ok-${engine}-${n}`);
      // One statement: committed together, so the worker's next fetch takes all five.
      await queue.enqueueMany(
        database.db,
        batchJob,
        ok.map((marker) => ({ data: { marker } })),
      );
      await waitFor(async () => (merged.some((run) => run.includes(ok[0] as string)) ? true : undefined));
      expect(merged.find((run) => run.includes(ok[0] as string))).toEqual(ok);
      expect(alone.filter((item) => ok.includes(item.marker))).toEqual([]);

      const failing = [1, 2].map((n) => `fail-${engine}-${n}`);
      await queue.enqueueMany(
        database.db,
        batchJob,
        failing.map((marker) => ({ data: { marker } })),
      );
      await waitFor(async () =>
        failing.every((marker) => alone.some((item) => item.marker === marker)) ? true : undefined,
      );
      expect(
        alone
          .filter((item) => failing.includes(item.marker))
          .sort((a, b) => a.marker.localeCompare(b.marker)),
      ).toEqual(failing.map((marker) => ({ marker, attempt: 2 })));
    });

    it("runs a backlog `concurrency` jobs at a time, each worker taking the next job when it finishes one", async () => {
      const { database, queue } = harness().vigil.services;
      const engine = harness().engine;
      const markers = [1, 2, 3, 4, 5, 6].map((n) => `held-${engine}-${n}`);
      mostAtOnce = 0;
      const heldNow = () => markers.filter((marker) => held.has(marker));
      try {
        await queue.enqueueMany(
          database.db,
          heldJob,
          markers.map((marker) => ({ data: { marker } })),
        );
        const first = await waitFor(async () => (heldNow().length === 3 ? heldNow() : undefined));
        for (const marker of first) held.get(marker)?.();
        // No job is sent from here on (a job sent wakes the workers): the three that finished fetch
        // the three still waiting themselves.
        const second = await waitFor(async () => {
          const now = heldNow();
          return now.length === 3 && now.every((marker) => !first.includes(marker)) ? now : undefined;
        });
        for (const marker of second) held.get(marker)?.();
        await waitFor(async () => (markers.every((marker) => finished.includes(marker)) ? true : undefined));
      } finally {
        for (const marker of heldNow()) held.get(marker)?.();
      }
      expect(mostAtOnce).toBe(3);
      expect(finished.filter((marker) => markers.includes(marker)).sort()).toEqual(markers);
    });

    it("spaces a worker's next fetch after a short one, however soon the next job is sent", async () => {
      const { database, queue } = harness().vigil.services;
      const engine = harness().engine;
      const first = `spaced-${engine}-first`;
      const later = [1, 2, 3].map((n) => `spaced-${engine}-${n}`);
      const fetchOf = (marker: string) => spacedFetches.find((fetch) => fetch.markers.includes(marker));
      await queue.enqueue(database.db, spacedJob, { marker: first });
      const firstFetch = await waitFor(async () => fetchOf(first));
      // Each sent on its own, each waking the worker: without the spacing the first is fetched as
      // soon as its commit wakes the worker.
      for (const marker of later) await queue.enqueue(database.db, spacedJob, { marker });
      await waitFor(async () => (later.every(fetchOf) ? true : undefined));
      const next = spacedFetches[spacedFetches.indexOf(firstFetch) + 1];
      expect(next?.markers).toContain(later[0]);
      // The spacing counts from the fetch, a little before the handler records it (more on a busy
      // machine): some slack, still well above the gap an unspaced worker leaves.
      expect((next?.at ?? 0) - firstFetch.at).toBeGreaterThanOrEqual(SPACING_MS - 50);
      expect(
        spacedFetches
          .flatMap((fetch) => fetch.markers)
          .filter((marker) => marker.startsWith(`spaced-${engine}`))
          .sort(),
      ).toEqual([...later, first].sort());
    });

    it("refuses a payload that does not match the job's schema", async () => {
      const { database, queue } = harness().vigil.services;
      await expect(queue.enqueue(database.db, recordJob, { marker: 5 } as never)).rejects.toThrow(
        "probe.record: payload does not match its schema",
      );
    });
  },
  {},
  { jobs: [recordJob, flakyJob, batchJob, heldJob, spacedJob] },
);
