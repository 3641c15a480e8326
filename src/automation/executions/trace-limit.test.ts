// The trace DAG is cut at TRACE_NODE_LIMIT nodes, stages first, and says so with `truncated`.
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { createApprovedWorkflow, readTrace, startAs } from "../../../test/automation-runs.ts";
import { describeEachEngine } from "../../../test/harness.ts";
import { TRACE_NODE_LIMIT } from "./traces.ts";

describeEachEngine(
  "trace node limit",
  (harness) => {
    it("returns the first 500 nodes, stages first, edges only between shown nodes, and truncated", async () => {
      const h = harness();
      const me = await h.createKey();
      await createApprovedWorkflow(h, me.auth, {
        name: "wide",
        stages: [
          { id: "a", action_type: "json_transform", config: { expression: "1" } },
          { id: "b", action_type: "json_transform", config: { expression: "2" }, depends_on: ["a"] },
        ],
      });
      const started = await startAs(
        h,
        { key: me.key, auth: me.auth },
        { target: { type: "workflow", name: "wide" } },
      );
      const small = await readTrace(h, me.auth, started.traceId);
      expect(small).toMatchObject({
        truncated: false,
        edges: [{ source: "stage:a", target: "stage:b" }],
      });
      expect(small.nodes.map((node: { id: string }) => node.id)).toEqual(["stage:a", "stage:b"]);

      // 600 tool calls under stage a: more than the limit.
      await h.vigil.services.database.db.execute(sql`
        insert into execution_nodes (id, trace_id, key, parent_key, stage_id, depth, stage_position, position, type, label, status)
        select gen_random_uuid(), ${started.traceId}::uuid, 'stage:a/tool:' || lpad(g::text, 4, '0'), 'stage:a', 'a', 2, 0, g,
          'tool', 'call ' || g, 'success'
        from generate_series(1, 600) as g`);
      const body = await readTrace(h, me.auth, started.traceId);
      expect(body.truncated).toBe(true);
      expect(body.nodes).toHaveLength(TRACE_NODE_LIMIT);
      expect(body.nodes.slice(0, 3).map((node: { id: string }) => node.id)).toEqual([
        "stage:a",
        "stage:b",
        "stage:a/tool:0001",
      ]);
      expect(body.nodes.at(-1).id).toBe(`stage:a/tool:${String(TRACE_NODE_LIMIT - 2).padStart(4, "0")}`);
      const shown = new Set(body.nodes.map((node: { id: string }) => node.id));
      for (const edge of body.edges) {
        expect(shown.has(edge.source) && shown.has(edge.target), JSON.stringify(edge)).toBe(true);
      }
      expect(body.edges).toHaveLength(1 + (TRACE_NODE_LIMIT - 2));
    });
  },
  // No workers: the run stays as started while the test adds nodes to it.
  { role: "api" },
);
