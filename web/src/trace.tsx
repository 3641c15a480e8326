// A run's trace (getExecutionTrace) as a graph: nodes laid out in columns by their depth from the
// start, edges drawn as lines between them. Polled while the run is under way.
import { useQuery } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "./api/client.ts";
import type { Caller } from "./app.tsx";
import { ErrorBox, Loading, NeedsScope, StaleNote, unreadable } from "./ui.tsx";

type Trace = Schemas["TraceDAGResponse"];

const COLUMN = 190;
const ROW = 64;
const NODE_W = 160;
const NODE_H = 40;
/** The characters of a label that fit in a box; the step list below the graph has it whole. */
const LABEL_FITS = 22;

/** Column = longest path from a root, so every edge points right. */
function layout(trace: Trace) {
  const depth = new Map<string, number>(trace.nodes.map((node) => [node.id, 0]));
  for (let pass = 0; pass < trace.nodes.length; pass++) {
    let changed = false;
    for (const edge of trace.edges) {
      const next = (depth.get(edge.source) ?? 0) + 1;
      if (depth.has(edge.target) && next > (depth.get(edge.target) ?? 0)) {
        depth.set(edge.target, next);
        changed = true;
      }
    }
    if (!changed) break;
  }
  const rows = new Map<number, number>();
  const at = new Map<string, { x: number; y: number }>();
  for (const node of trace.nodes) {
    const column = depth.get(node.id) ?? 0;
    const row = rows.get(column) ?? 0;
    rows.set(column, row + 1);
    at.set(node.id, { x: 10 + column * COLUMN, y: 10 + row * ROW });
  }
  const width = 20 + Math.max(0, ...[...depth.values()]) * COLUMN + NODE_W;
  const height = 20 + Math.max(1, ...rows.values()) * ROW;
  return { at, width, height };
}

/** The scope a trace is read with (getExecutionTrace). */
const TRACE_SCOPE = "aios_automation_read";

/**
 * `covered`: the page showing the trace says its own refresh failed, which covers the trace's. A key
 * without the trace's scope (one that reads investigations only) is told so, and it is not asked for.
 */
export function TraceGraph(props: { traceId: string; live: boolean; covered?: boolean; caller: Caller }) {
  const { traceId, live } = props;
  const readable = props.caller.scopes.includes(TRACE_SCOPE);
  const trace = useQuery({
    queryKey: ["trace", traceId],
    queryFn: async () =>
      unwrap(await api.GET("/platform/api/v1/executions/{traceId}", { params: { path: { traceId } } })),
    refetchInterval: (query) => (live || !query.state.data?.execution.trace_settled ? 1_500 : false),
    enabled: readable,
  });
  if (!readable) return <NeedsScope what="the run's trace" scope={TRACE_SCOPE} />;
  if (trace.isPending) return <Loading />;
  // A failed refresh keeps the last graph, marked old (StaleNote).
  const data = trace.data;
  if (!data || unreadable(trace)) return <ErrorBox error={trace.error} />;
  const { at, width, height } = layout(data);
  const failed = data.nodes.some((node) => node.error);
  return (
    <figure class="trace" data-status={data.execution.status}>
      <StaleNote read={trace} covered={props.covered} />
      <svg width={width} height={height} role="img" aria-label="Run trace (its steps are listed below it)">
        {data.edges.map((edge) => {
          const from = at.get(edge.source);
          const to = at.get(edge.target);
          if (!from || !to) return null;
          return (
            <line
              key={`${edge.source}-${edge.target}`}
              class="trace-edge"
              x1={from.x + NODE_W}
              y1={from.y + NODE_H / 2}
              x2={to.x}
              y2={to.y + NODE_H / 2}
            />
          );
        })}
        {data.nodes.map((node) => {
          const p = at.get(node.id);
          if (!p) return null;
          return (
            <g key={node.id} class={`trace-node trace-${node.status}`} data-node={node.id}>
              <title>{`${node.label} (${node.type}): ${node.state}${node.error ? ` — ${node.error}` : ""}`}</title>
              <rect x={p.x} y={p.y} width={NODE_W} height={NODE_H} rx={6} />
              <text x={p.x + 8} y={p.y + 17}>
                {node.label.length > LABEL_FITS ? `${node.label.slice(0, LABEL_FITS - 1)}…` : node.label}
              </text>
              <text x={p.x + 8} y={p.y + 32} class="trace-state">
                {node.state}
              </text>
            </g>
          );
        })}
      </svg>
      {/* The graph's boxes cut long labels and show an error only on hover: the list has each step
          whole, as text a keyboard and a screen reader reach. Open by itself when a step failed. */}
      <details class="trace-steps" open={failed}>
        <summary>Steps ({data.nodes.length})</summary>
        <ol>
          {data.nodes.map((node) => (
            <li key={node.id} data-step={node.id} style={{ overflowWrap: "anywhere" }}>
              {node.label} <span class="muted small">({node.type})</span>: {node.state}
              {node.error ? <div class="warn small trace-step-error">{node.error}</div> : null}
            </li>
          ))}
        </ol>
      </details>
      <figcaption class="muted small">
        {data.execution.target_type} {data.execution.status}
        {data.truncated ? " (first 500 steps)" : ""} · ${data.execution.total_cost.toFixed(4)}
      </figcaption>
    </figure>
  );
}
