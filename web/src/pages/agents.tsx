// Agents: the list and one agent's definition and readiness.
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../api/client.ts";
import { Link } from "../router.tsx";
import {
  Empty,
  ErrorBox,
  ListError,
  Loading,
  outdated,
  retryWhileStale,
  StaleNote,
  Time,
  unreadable,
  useTitle,
} from "../ui.tsx";

export function AgentsPage({ name }: { name: string }) {
  return name ? <AgentDetail name={name} /> : <AgentList />;
}

function AgentList() {
  const list = useQuery({
    queryKey: ["agents"],
    queryFn: async () => unwrap(await api.GET("/platform/api/v1/agents")),
    // It does not poll: a refresh that failed (coming back to the list) asks again until one answers.
    refetchInterval: retryWhileStale,
  });
  useTitle("Agents");
  return (
    <section>
      <h1>Agents</h1>
      <ListError read={list} />
      {list.isPending ? (
        <Loading />
      ) : list.data?.length === 0 ? (
        <Empty title="No agents yet.">
          Register one with <code>POST /platform/api/v1/agents</code> (see{" "}
          <a href="/docs">the API reference</a>).
        </Empty>
      ) : (
        <div class={outdated(list) ? "table-scroll stale" : "table-scroll"}>
          <table class="plain">
            <thead>
              <tr>
                <th>Name</th>
                <th>Kind</th>
                <th>Ready</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.data?.map((agent) => (
                <tr key={agent.name}>
                  <td>
                    <Link href={`/agents/${encodeURIComponent(agent.name)}`}>{agent.name}</Link>
                    <div class="small muted">{agent.description}</div>
                  </td>
                  <td>{agent.kind}</td>
                  <td>{agent.ready ? "ready" : <span class="warn">not ready</span>}</td>
                  <td>
                    <Time at={agent.updated_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function AgentDetail({ name }: { name: string }) {
  const agent = useQuery({
    queryKey: ["agent", name],
    queryFn: async () =>
      unwrap(await api.GET("/platform/api/v1/agents/{name}", { params: { path: { name } } })),
    refetchInterval: retryWhileStale,
  });
  useTitle(`Agent ${name}`);
  if (agent.isPending) return <Loading />;
  // A failed refresh (of a cached agent) keeps it on screen, marked old, and asks again.
  const a = agent.data;
  if (!a || unreadable(agent)) return <ErrorBox error={agent.error} />;
  return (
    <section>
      <p class="crumbs">
        <Link href="/agents">← Agents</Link>
      </p>
      <StaleNote read={agent} />
      <h1>{a.name}</h1>
      <p class="muted">
        {a.kind} · {a.model ?? "default model"} · at most {a.max_steps} steps · updated{" "}
        <Time at={a.updated_at} />
      </p>
      {/* Said either way: a page silent about readiness does not tell "ready" from "not known". */}
      <p class="readiness">
        {a.ready ? (
          <>
            <span class="badge ok">ready</span> Safe to run unattended.
          </>
        ) : (
          <>
            <span class="badge warn">not ready</span> Not safe to run unattended until this is fixed:
          </>
        )}
      </p>
      {a.not_ready_reasons.map((reason) => (
        <p key={reason.errCode} class="warn small">
          {reason.msg} {reason.resolution_hint}
        </p>
      ))}
      <div class="card">
        <h2>Definition</h2>
        <dl class="fields">
          <dt>Integrations</dt>
          <dd>{a.integrations.join(", ") || "—"}</dd>
          <dt>Tools</dt>
          <dd>{a.tools.join(", ") || "—"}</dd>
          <dt>Inputs</dt>
          <dd>{a.inputs.map((input) => input.name).join(", ") || "—"}</dd>
        </dl>
        {a.instructions ? <pre class="prose">{a.instructions}</pre> : null}
      </div>
    </section>
  );
}
