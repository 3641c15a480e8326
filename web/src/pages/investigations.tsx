// Investigations: the list (newest first, by status) and one investigation: its verdict and plain
// summary first, hypotheses, the RCA, evidence (only verified links are clickable), prior incidents
// and the run's trace. A running investigation is polled until it ends.
import { useQuery } from "@tanstack/react-query";
import { api, type Schemas, unwrap } from "../api/client.ts";
import type { Caller } from "../app.tsx";
import { Link, queryHref, setQuery, useLocation } from "../router.tsx";
import { TraceGraph } from "../trace.tsx";
import {
  Empty,
  ErrorBox,
  ListError,
  Loading,
  outdated,
  StaleNote,
  shortId,
  Time,
  unreadable,
  useTitle,
} from "../ui.tsx";

type Investigation = Schemas["Investigation"];
const FINAL = new Set(["completed", "failed", "cancelled"]);
const STATUSES = ["queued", "running", "completed", "failed", "cancelled"] as const;
const VERDICT: Record<string, string> = {
  real_problem: "Real problem",
  alert_is_misconfigured: "Alert is misconfigured",
  not_enough_information: "Not enough information",
};
const PAGE_SIZE = 50;
const percent = (value: number | null | undefined) => (value == null ? "—" : `${Math.round(value * 100)}%`);

export function InvestigationsPage({ id, caller }: { id: string; caller: Caller }) {
  return id ? <InvestigationPage id={id} caller={caller} /> : <InvestigationList />;
}

function InvestigationList() {
  const { query } = useLocation();
  const status = (query.get("status") ?? "") as (typeof STATUSES)[number] | "";
  const page = Math.max(1, Math.floor(Number(query.get("page") ?? "1")) || 1);
  const list = useQuery({
    queryKey: ["investigations", status, page],
    queryFn: async () =>
      unwrap(
        await api.GET("/app/sre/api/v1/investigations", {
          params: { query: { page, page_size: PAGE_SIZE, ...(status ? { status } : {}) } },
        }),
      ),
    refetchInterval: 5_000,
  });
  useTitle("Investigations");
  return (
    <section>
      <h1>Investigations</h1>
      <div class="toolbar">
        <label>
          Status {/* A new history entry, as a page is: Back returns to the list as it was. */}
          <select value={status} onChange={(event) => setQuery({ status: event.currentTarget.value })}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ListError read={list} />
      {list.isPending ? <Loading /> : null}
      {list.data && list.data.investigations.length === 0 ? (
        <NoInvestigations page={page} total={list.data.total} status={status} />
      ) : null}
      {list.data && list.data.investigations.length > 0 ? (
        <div class={outdated(list) ? "table-scroll stale" : "table-scroll"}>
          <table class="list investigations">
            <thead>
              <tr>
                <th>Status</th>
                <th>Verdict</th>
                <th>Alert</th>
                <th>Summary</th>
                <th>Started</th>
              </tr>
            </thead>
            <tbody>
              {list.data.investigations.map((inv) => (
                <tr key={inv.id} class="investigation-row">
                  <td>
                    <span class={`badge inv-${inv.status}`}>{inv.status}</span>
                  </td>
                  <td>{verdictOf(inv) ? VERDICT[verdictOf(inv) ?? ""] : "—"}</td>
                  <td>
                    {/* The list carries the alert's id, not its title: no read per row for it. Its
                        end, not its start, tells apart the alerts of one burst (shortId). */}
                    <Link href={`/alerts/${inv.alert_id}`} class="inv-alert" title={`Alert ${inv.alert_id}`}>
                      <code>{shortId(inv.alert_id)}</code>
                    </Link>
                  </td>
                  <td>
                    <Link href={`/investigations/${inv.id}`}>
                      {inv.result_summary ?? `Investigation ${shortId(inv.id)}`}
                    </Link>
                  </td>
                  <td>
                    <Time at={inv.started_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {list.data && list.data.investigations.length > 0 && (page > 1 || list.data.total > PAGE_SIZE) ? (
        <Pager page={page} total={list.data.total} />
      ) : null}
    </section>
  );
}

/** The URL of this list at another page (page 1 is the URL without one). */
const pageHref = (page: number) => queryHref({ page: page > 1 ? String(page) : null });

/** Previous and Next, each a new history entry so Back returns to the page before, and where we are. */
function Pager({ page, total }: { page: number; total: number }) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        disabled={page <= 1}
        onClick={() => setQuery({ page: page > 2 ? String(page - 1) : null })}
      >
        ← Previous
      </button>
      <span>
        Page {page} of {pages} · <strong class="total">{total}</strong>{" "}
        {total === 1 ? "investigation" : "investigations"}
      </span>
      <button type="button" disabled={page >= pages} onClick={() => setQuery({ page: String(page + 1) })}>
        Next →
      </button>
    </nav>
  );
}

/** An empty page: none at all, none of this status, or a page past the end (an old link). */
function NoInvestigations({ page, total, status }: { page: number; total: number; status: string }) {
  if (total > 0)
    return (
      <Empty title={`Page ${page} is past the end of this list.`}>
        {total} {total === 1 ? "investigation" : "investigations"}: go to{" "}
        <Link href={pageHref(Math.ceil(total / PAGE_SIZE))}>the last page</Link> or{" "}
        <Link href={pageHref(1)}>the first page</Link>.
      </Empty>
    );
  if (status)
    return (
      <Empty title={`No investigations match this filter (status ${status}).`}>
        <button type="button" class="link" onClick={() => setQuery({ status: null })}>
          Show every status
        </button>
      </Empty>
    );
  return (
    <Empty title="No investigations yet.">
      Open an alert and press <strong>Investigate</strong>.
    </Empty>
  );
}

const verdictOf = (inv: Investigation) => inv.structured_rca?.plain_summary?.verdict ?? null;

function InvestigationPage({ id, caller }: { id: string; caller: Caller }) {
  const investigation = useQuery({
    queryKey: ["investigation", id],
    queryFn: async () =>
      unwrap(await api.GET("/app/sre/api/v1/investigations/{id}", { params: { path: { id } } })),
    // Live while it runs; a final one does not change.
    refetchInterval: (query) => (query.state.data && FINAL.has(query.state.data.status) ? false : 1_500),
  });
  useTitle(`Investigation ${shortId(id)}`);
  if (investigation.isPending) return <Loading />;
  // A failed refresh keeps the last answer on screen, marked old (StaleNote).
  const inv = investigation.data;
  if (!inv || unreadable(investigation)) return <ErrorBox error={investigation.error} />;
  const rca = inv.structured_rca;
  const plain = rca?.plain_summary;
  const verdict = plain?.verdict;
  const live = !FINAL.has(inv.status);
  return (
    <article class="investigation">
      <p class="muted small">
        <Link href="/investigations">Investigations</Link> ·{" "}
        <Link href={`/alerts/${inv.alert_id}`}>the alert</Link>
      </p>
      <StaleNote read={investigation} />
      <h1>
        Investigation <span class={`badge inv-${inv.status} inv-status`}>{inv.status}</span>
      </h1>
      <p class="muted small">
        started <Time at={inv.started_at} />
        {inv.finished_at ? (
          <>
            {" "}
            · finished <Time at={inv.finished_at} />
          </>
        ) : (
          " · updating live"
        )}
      </p>

      <section class="verdict-box">
        <h2 class="verdict" data-verdict={verdict ?? ""}>
          {verdict ? VERDICT[verdict] : live ? "Investigating…" : "No verdict"}
        </h2>
        {plain?.what_broke ? (
          <p>
            <strong>What broke:</strong> {plain.what_broke}
          </p>
        ) : null}
        {plain?.what_to_do ? (
          <p>
            <strong>What to do:</strong> {plain.what_to_do}
          </p>
        ) : null}
        {inv.result_summary ? <p class="summary">{inv.result_summary}</p> : null}
        {plain?.how_we_got_here?.length ? (
          <details>
            <summary>How we got here</summary>
            <ol>
              {plain.how_we_got_here.map((step) => (
                <li key={step}>{step}</li>
              ))}
            </ol>
          </details>
        ) : null}
      </section>

      <section>
        <h2>Hypotheses</h2>
        {inv.hypotheses.length === 0 ? (
          <p class="muted">{live ? "None yet." : "None."}</p>
        ) : (
          <ol class="hypotheses">
            {inv.hypotheses.map((h) => (
              <li key={h.statement} class={`hypothesis hyp-${h.status ?? "open"}`}>
                <span class="badge">{h.status ?? "open"}</span>{" "}
                <span class="confidence">{percent(h.confidence)}</span> {h.statement}
                {h.rationale ? <div class="muted small">{h.rationale}</div> : null}
              </li>
            ))}
          </ol>
        )}
      </section>

      {rca ? (
        <section class="rca">
          <h2>Root cause analysis</h2>
          <dl class="fields">
            <dt>Summary</dt>
            <dd>{rca.summary}</dd>
            <dt>Root cause</dt>
            <dd>{rca.root_cause ?? "—"}</dd>
            <dt>Category</dt>
            <dd>{rca.category.replaceAll("_", " ")}</dd>
            <dt>Confidence</dt>
            <dd>{percent(rca.confidence)}</dd>
            <dt>Affected</dt>
            <dd>
              {[rca.affected.service, rca.affected.host, rca.affected.cluster].filter(Boolean).join(" · ") ||
                "—"}
            </dd>
            {rca.trigger ? (
              <>
                <dt>Trigger</dt>
                <dd>
                  <code>{rca.trigger}</code>
                </dd>
              </>
            ) : null}
          </dl>
          {rca.contributing_factors.length ? (
            <>
              <h3>Contributing factors</h3>
              <ul>
                {rca.contributing_factors.map((f) => (
                  <li key={f}>{f}</li>
                ))}
              </ul>
            </>
          ) : null}
          {rca.remediation.length ? (
            <>
              <h3>Remediation</h3>
              <ul>
                {rca.remediation.map((r) => (
                  <li key={r}>{r}</li>
                ))}
              </ul>
            </>
          ) : null}
        </section>
      ) : null}

      <section>
        <h2>Evidence</h2>
        {inv.evidence.length === 0 ? <p class="muted">No evidence cited.</p> : null}
        <ul class="evidence">
          {inv.evidence.map((e) => (
            <li key={`${e.url}-${e.captured_at}`} class={e.verified ? "verified" : "unverified"}>
              <span class="badge">{e.kind}</span>{" "}
              {e.verified ? (
                <a href={e.url} target="_blank" rel="noreferrer noopener">
                  {e.title}
                </a>
              ) : (
                // Not verified: shown as text, never as a link to follow.
                <span class="evidence-title">{e.title}</span>
              )}{" "}
              {e.verified ? (
                <span class="badge ok">verified</span>
              ) : (
                <span class="badge warn" title={e.url}>
                  unverified
                </span>
              )}
              {e.verified ? null : <div class="muted small evidence-url">{e.url}</div>}
              {e.description ? <div class="muted small">{e.description}</div> : null}
            </li>
          ))}
        </ul>
      </section>

      <section>
        <h2>Prior incidents</h2>
        {inv.prior_incidents.length === 0 ? <p class="muted">No earlier alert like this one.</p> : null}
        <ul class="prior">
          {inv.prior_incidents.map((p) => (
            <li key={`${p.alert_id} ${p.triggered_at}`}>
              <Link href={`/alerts/${p.alert_id}`}>{p.title}</Link>{" "}
              <span class="muted small">
                {p.match.replaceAll("_", " ")} · <Time at={p.triggered_at} /> · {p.resolution}
              </span>
              <div class="muted small">{p.why_matched}</div>
            </li>
          ))}
        </ul>
      </section>

      <section>
        <h2>Trace</h2>
        <TraceGraph
          traceId={inv.guild_trace_id}
          live={live}
          covered={outdated(investigation)}
          caller={caller}
        />
      </section>
    </article>
  );
}
