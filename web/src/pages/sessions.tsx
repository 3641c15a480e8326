// Sessions: search the list; one session's messages, runs and their costs, artifacts to download,
// the export, terminate, and the trace of its latest run.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, download, unwrap } from "../api/client.ts";
import type { Caller } from "../app.tsx";
import { Link, setQuery, useLocation } from "../router.tsx";
import { TraceGraph } from "../trace.tsx";
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

const PAGE = 50;
const usd = (value: number) => `$${value.toFixed(4)}`;

export function SessionsPage({ id, caller }: { id: string; caller: Caller }) {
  return id ? <SessionPage id={id} caller={caller} /> : <SessionList />;
}

function SessionList() {
  const { query } = useLocation();
  const q = query.get("q") ?? "";
  const offset = Number(query.get("offset") ?? "0") || 0;
  const [text, setText] = useState(q);
  // The field follows the URL (Back, the Sessions link), as the alert list's does: it never shows a
  // search that is not in force.
  useEffect(() => setText(q), [q]);
  useTitle("Sessions");
  const list = useQuery({
    queryKey: ["sessions", q, offset],
    queryFn: async () =>
      unwrap(
        await api.GET("/platform/api/v1/sessions", {
          params: { query: { limit: PAGE, offset, ...(q ? { q } : {}) } },
        }),
      ),
    refetchInterval: 10_000,
  });
  return (
    <section>
      <h1>Sessions</h1>
      <form
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          setQuery({ q: text, offset: null });
        }}
      >
        <input
          type="search"
          name="q"
          aria-label="Search sessions"
          placeholder="Search title, prompt, responder, id…"
          value={text}
          onInput={(event) => setText(event.currentTarget.value)}
          // As on the alert list: Esc leaves the field showing the search in force, not emptied.
          onKeyDown={(event) => {
            if (event.key !== "Escape") return;
            event.preventDefault();
            setText(q);
            event.currentTarget.blur();
          }}
        />
        <button type="submit">Search</button>
      </form>
      <ListError read={list} />
      {list.isPending ? <Loading /> : null}
      {list.data && list.data.items.length === 0 ? (
        <Empty title={q ? "No session matches." : "No sessions yet."}>
          <Link href="/ask">Ask</Link> starts one; webhooks and investigations do too.
        </Empty>
      ) : null}
      {list.data && list.data.items.length > 0 ? (
        <div class={outdated(list) ? "table-scroll stale" : "table-scroll"}>
          <table class="list sessions">
            <thead>
              <tr>
                <th>Session</th>
                <th>Responder</th>
                <th>Status</th>
                <th>Runs</th>
                <th>Cost</th>
                <th>Last activity</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((s) => (
                <tr key={s.id} class="session-row">
                  <td>
                    <Link href={`/sessions/${s.id}`}>{s.title || s.first_prompt || s.id}</Link>
                    <div class="muted small">{s.initiator}</div>
                  </td>
                  <td>{s.responder ? `${s.responder.type} ${s.responder.name}` : "—"}</td>
                  <td>{s.status.replaceAll("_", " ")}</td>
                  <td>{s.execution_count}</td>
                  <td>{usd(s.total_cost)}</td>
                  <td>
                    <Time at={s.last_activity_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <div class="toolbar">
        {offset > 0 ? (
          <button
            type="button"
            class="ghost"
            onClick={() => setQuery({ offset: String(Math.max(0, offset - PAGE)) })}
          >
            Previous
          </button>
        ) : null}
        {list.data?.has_more ? (
          <button type="button" class="ghost" onClick={() => setQuery({ offset: String(offset + PAGE) })}>
            Next
          </button>
        ) : null}
      </div>
    </section>
  );
}

function SessionPage({ id, caller }: { id: string; caller: Caller }) {
  const client = useQueryClient();
  const path = { session_id: id };
  const session = useQuery({
    queryKey: ["session", id],
    queryFn: async () =>
      unwrap(await api.GET("/platform/api/v1/sessions/{session_id}", { params: { path } })),
    refetchInterval: (query) => (query.state.data?.status === "running" ? 1_500 : 10_000),
  });
  const artifacts = useQuery({
    queryKey: ["session-artifacts", id],
    queryFn: async () =>
      unwrap(await api.GET("/platform/api/v1/sessions/{session_id}/artifacts", { params: { path } })),
    // A failed refresh asks again, so the note "It refreshes by itself" stays true once the run ends.
    refetchInterval: session.data?.status === "running" ? 2_000 : retryWhileStale,
  });
  const [reason, setReason] = useState("");
  // Terminating cancels the session's running runs for good: the first press asks, the second acts.
  const [confirming, setConfirming] = useState(false);
  // The focus follows the step: to the confirming button, and back to Terminate… when cancelled.
  const confirmButton = useRef<HTMLButtonElement>(null);
  const terminateButton = useRef<HTMLButtonElement>(null);
  const reasonField = useRef<HTMLInputElement>(null);
  const asked = useRef(false);
  useEffect(() => {
    if (confirming) confirmButton.current?.focus();
    else if (asked.current) terminateButton.current?.focus();
    asked.current = confirming;
  }, [confirming]);
  // The reason is the mutation's variable, read when the form is sent: useMutation takes a new
  // mutationFn only after the next paint, so one closing over `reason` could send an older one.
  const terminate = useMutation({
    mutationFn: async (why: string) =>
      unwrap(
        await api.POST("/platform/api/v1/sessions/{session_id}/terminate", {
          params: { path, query: why ? { reason: why } : {} },
        }),
      ),
    onSuccess: () => {
      setConfirming(false);
      client.invalidateQueries({ queryKey: ["session", id] });
    },
  });
  const saving = useMutation({
    mutationFn: (args: { path: string; name: string }) => download(args.path, args.name),
  });
  useTitle(session.data ? `Session ${session.data.title || session.data.first_prompt || id}` : "Session");
  if (session.isPending) return <Loading />;
  // A failed refresh keeps the last answer on screen (and the reason typed), marked old (StaleNote).
  const s = session.data;
  if (!s || unreadable(session)) return <ErrorBox error={session.error} />;
  const base = `/platform/api/v1/sessions/${encodeURIComponent(id)}`;
  const latest = s.executions.at(-1);
  const canWrite = caller.scopes.includes("aios_automation_write");
  return (
    <article class="session">
      <p class="muted small">
        <Link href="/sessions">Sessions</Link>
      </p>
      <StaleNote read={session} />
      <h1>{s.title || s.first_prompt || s.id}</h1>
      <p class="muted small">
        <span class="session-status">{s.status.replaceAll("_", " ")}</span> · {s.initiator}
        {s.responder ? ` · ${s.responder.type} ${s.responder.name}` : ""} · total {usd(s.total_cost)} · last
        activity <Time at={s.last_activity_at} />
      </p>
      <div class="toolbar">
        <button
          type="button"
          onClick={() => saving.mutate({ path: `${base}/export?format=json`, name: `session-${id}.json` })}
        >
          Export
        </button>
        {canWrite ? (
          <form
            class="terminate"
            onKeyDown={(event) => {
              if (event.key === "Escape") setConfirming(false);
            }}
            onSubmit={(event) => {
              event.preventDefault();
              if (confirming) terminate.mutate(reasonField.current?.value ?? reason);
              else setConfirming(true);
            }}
          >
            <input
              ref={reasonField}
              aria-label="Reason"
              placeholder="reason (optional)"
              value={reason}
              onInput={(event) => setReason(event.currentTarget.value)}
            />
            {confirming ? (
              <>
                <span class="confirm-note" role="alert">
                  Stop every running run of this session? This cannot be undone.
                </span>
                <button type="submit" class="danger" disabled={terminate.isPending} ref={confirmButton}>
                  Yes, terminate
                </button>
                <button type="button" class="ghost" onClick={() => setConfirming(false)}>
                  Cancel
                </button>
              </>
            ) : (
              <button type="submit" class="danger" ref={terminateButton}>
                Terminate…
              </button>
            )}
          </form>
        ) : null}
      </div>
      <ErrorBox error={terminate.error ?? saving.error} />
      {terminate.data ? <p class="muted small">Terminated.</p> : null}
      {s.summary ? <p class="summary">{s.summary}</p> : null}

      <section>
        <h2>Messages</h2>
        {s.messages.length === 0 ? <p class="muted">No messages.</p> : null}
        <ol class="messages">
          {s.messages.map((m) => (
            <li key={m.id} class={`message message-${m.role}`}>
              <span class="badge">{m.role}</span> <Time at={m.created_at} />
              <pre class="prose">{m.content}</pre>
            </li>
          ))}
        </ol>
      </section>

      <section>
        <h2>Runs</h2>
        {s.executions.length === 0 ? <p class="muted">No runs.</p> : null}
        {s.executions.length > 0 ? (
          <div class="table-scroll">
            <table class="list runs">
              <thead>
                <tr>
                  <th>Target</th>
                  <th>Status</th>
                  <th>Started</th>
                  <th>Cost</th>
                </tr>
              </thead>
              <tbody>
                {s.executions.map((e) => (
                  <tr key={e.run_id}>
                    <td>
                      {e.target_type} {e.target_name}
                      {e.workflow_version ? ` v${e.workflow_version}` : ""}
                    </td>
                    <td>
                      {e.cancelled ? "cancelled" : e.status}
                      {e.error ? <div class="muted small">{e.error}</div> : null}
                    </td>
                    <td>
                      <Time at={e.started_at} />
                    </td>
                    <td>{usd(e.total_cost)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>

      <section>
        <h2>Artifacts</h2>
        {/* Kept after a failed refresh; the page's note, when it has one, says so for both. */}
        <StaleNote read={artifacts} covered={outdated(session)} />
        {unreadable(artifacts) ? <ErrorBox error={artifacts.error} /> : null}
        {artifacts.data && artifacts.data.length === 0 ? <p class="muted">No artifacts.</p> : null}
        <ul class="artifacts">
          {artifacts.data?.map((a) => (
            <li key={a.id}>
              <button
                type="button"
                class="link"
                onClick={() =>
                  saving.mutate({
                    path: `${base}/artifacts/${encodeURIComponent(a.id)}/download`,
                    name: a.name,
                  })
                }
              >
                {a.name}
              </button>{" "}
              <span class="muted small">
                {a.mime_type} · {a.size_bytes} bytes · <Time at={a.created_at} />
              </span>
            </li>
          ))}
        </ul>
      </section>

      {latest ? (
        <section>
          <h2>Trace of the latest run</h2>
          <TraceGraph
            traceId={latest.trace_id}
            live={s.status === "running"}
            covered={outdated(session)}
            caller={caller}
          />
        </section>
      ) : null}
    </article>
  );
}
