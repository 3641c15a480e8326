// Reading EXPLAIN (FORMAT JSON) answers, which PostgreSQL gives as json and PGlite as text.

type PlanNode = Record<string, unknown>;

/** Every node of a plan, parents before their children; `rows` is EXPLAIN's answer. */
function nodesOfPlan(rows: unknown[]): PlanNode[] {
  const [explained] = Object.values((rows[0] ?? {}) as object) as unknown[];
  const plan = (typeof explained === "string" ? JSON.parse(explained) : explained) as { Plan: PlanNode }[];
  const nodes: PlanNode[] = [];
  const visit = (node: PlanNode) => {
    nodes.push(node);
    for (const child of (node.Plans as PlanNode[] | undefined) ?? []) visit(child);
  };
  visit(plan?.[0]?.Plan ?? {});
  return nodes;
}

/** Every index scan of a plan, in the order met: the index and what it is searched by. */
export function scansOfPlan(rows: unknown[]): { index: string; cond: string }[] {
  return nodesOfPlan(rows).flatMap((node) =>
    typeof node["Index Name"] === "string"
      ? [{ index: node["Index Name"], cond: String(node["Index Cond"] ?? "") }]
      : [],
  );
}

/** The indexes a plan scans, each once, in the order met; `rows` is EXPLAIN's answer. */
export function indexesOfPlan(rows: unknown[]): string[] {
  return [...new Set(scansOfPlan(rows).map((scan) => scan.index))];
}

/**
 * Rows an EXPLAIN (ANALYZE) answer read from `relation`: what each scan of it kept and what its
 * filter dropped, times the times it ran.
 */
export function rowsReadOf(rows: unknown[], relation: string): number {
  return nodesOfPlan(rows)
    .filter((node) => node["Relation Name"] === relation)
    .reduce(
      (read, node) =>
        read +
        (Number(node["Actual Rows"] ?? 0) + Number(node["Rows Removed by Filter"] ?? 0)) *
          Number(node["Actual Loops"] ?? 1),
      0,
    );
}
