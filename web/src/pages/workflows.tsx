// Workflows: the list, then one workflow's versions with a diff between any two and approve.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "preact/hooks";
import { api, type Schemas, unwrap } from "../api/client.ts";
import type { Caller } from "../app.tsx";
import { diffLines } from "../diff.ts";
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

type Version = Schemas["WorkflowVersion"];

export function WorkflowsPage({ name, caller }: { name: string; caller: Caller }) {
  return name ? <WorkflowDetail name={name} caller={caller} /> : <WorkflowList />;
}

function WorkflowList() {
  const list = useQuery({
    queryKey: ["workflows"],
    queryFn: async () =>
      unwrap(await api.GET("/platform/api/v1/workflows", { params: { query: { includeDrafts: false } } })),
    // It does not poll: a refresh that failed (coming back to the list) asks again until one answers.
    refetchInterval: retryWhileStale,
  });
  useTitle("Workflows");
  return (
    <section>
      <h1>Workflows</h1>
      <ListError read={list} />
      {list.isPending ? (
        <Loading />
      ) : list.data?.length === 0 ? (
        <Empty title="No workflows yet.">
          Create one with <code>POST /platform/api/v1/workflows</code> (see{" "}
          <a href="/docs">the API reference</a>); it appears here with its versions.
        </Empty>
      ) : (
        <div class={outdated(list) ? "table-scroll stale" : "table-scroll"}>
          <table class="plain">
            <thead>
              <tr>
                <th>Name</th>
                <th>Approved</th>
                <th>Draft</th>
                <th>Ready</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.data?.map((workflow) => (
                <tr key={workflow.name}>
                  <td>
                    <Link href={`/workflows/${encodeURIComponent(workflow.name)}`}>{workflow.name}</Link>
                  </td>
                  <td>{workflow.approved_version ? `v${workflow.approved_version}` : "—"}</td>
                  <td>{workflow.draft_version ? `v${workflow.draft_version}` : "—"}</td>
                  <td>{workflow.ready ? "ready" : <span class="warn">not ready</span>}</td>
                  <td>
                    <Time at={workflow.updated_at} />
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

/** What a version defines, as text to compare. */
const definitionOf = (version: Version) =>
  JSON.stringify(
    {
      description: version.description,
      inputs: version.inputs,
      stages: version.stages,
      routing_examples: version.routing_examples,
    },
    null,
    2,
  );

function WorkflowDetail({ name, caller }: { name: string; caller: Caller }) {
  const client = useQueryClient();
  const workflow = useQuery({
    queryKey: ["workflow", name],
    queryFn: async () =>
      unwrap(
        await api.GET("/platform/api/v1/workflows/{name}", {
          params: { path: { name }, query: { includeDrafts: true } },
        }),
      ),
    refetchInterval: retryWhileStale,
  });
  const approve = useMutation({
    mutationFn: async (version: number) =>
      unwrap(
        await api.POST("/platform/api/v1/workflows/{name}/versions/{version}/approve", {
          params: { path: { name, version } },
        }),
      ),
    onSuccess: (updated) => {
      client.setQueryData(["workflow", name], updated);
      client.invalidateQueries({ queryKey: ["workflows"] });
    },
  });
  const [pair, setPair] = useState<[number, number] | null>(null);
  useTitle(`Workflow ${name}`);
  if (workflow.isPending) return <Loading />;
  // A failed refresh (of a cached workflow) keeps it on screen, marked old, and asks again.
  const w = workflow.data;
  if (!w || unreadable(workflow)) return <ErrorBox error={workflow.error} />;
  const versions = w.versions;
  const [older, newer] = pair ?? [versions[1]?.version ?? 0, versions[0]?.version ?? 0];
  const before = versions.find((v) => v.version === older);
  const after = versions.find((v) => v.version === newer);
  const canWrite = caller.scopes.includes("aios_automation_write");
  return (
    <section>
      <p class="crumbs">
        <Link href="/workflows">← Workflows</Link>
      </p>
      <StaleNote read={workflow} />
      <h1>{w.name}</h1>
      <p class="muted">
        routing {w.routing_status} · approved {w.approved_version ? `v${w.approved_version}` : "none"} ·{" "}
        {w.ready ? "ready" : "not ready"}
      </p>
      {w.not_ready_reasons.map((reason) => (
        <p key={reason.errCode} class="warn small">
          {reason.msg} {reason.resolution_hint}
        </p>
      ))}
      <ErrorBox error={approve.error} />
      <div class="table-scroll">
        <table class="plain">
          <thead>
            <tr>
              <th>Version</th>
              <th>Status</th>
              <th>Stages</th>
              <th>Updated</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {versions.map((version) => (
              <tr key={version.version}>
                <td>v{version.version}</td>
                <td>{version.status}</td>
                <td>{version.stages.length}</td>
                <td>
                  <Time at={version.updated_at} />
                </td>
                <td>
                  {version.status === "draft" && canWrite ? (
                    <button
                      type="button"
                      class="small"
                      onClick={() => approve.mutate(version.version)}
                      disabled={approve.isPending}
                    >
                      Approve v{version.version}
                    </button>
                  ) : version.approved_at ? (
                    <span class="small muted">
                      approved <Time at={version.approved_at} />
                    </span>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {versions.length >= 2 ? (
        <div class="card">
          <h2>
            Compare{" "}
            <VersionSelect
              versions={versions}
              value={older}
              onChange={(v) => setPair([v, newer])}
              label="From"
            />{" "}
            →{" "}
            <VersionSelect
              versions={versions}
              value={newer}
              onChange={(v) => setPair([older, v])}
              label="To"
            />
          </h2>
          {before && after ? <Diff before={definitionOf(before)} after={definitionOf(after)} /> : null}
        </div>
      ) : versions[0] ? (
        <div class="card">
          <h2>Definition (v{versions[0].version})</h2>
          <pre class="raw">{definitionOf(versions[0])}</pre>
        </div>
      ) : null}
    </section>
  );
}

function VersionSelect(props: {
  versions: Version[];
  value: number;
  onChange: (v: number) => void;
  label: string;
}) {
  return (
    <select
      aria-label={props.label}
      value={props.value}
      onChange={(event) => props.onChange(Number(event.currentTarget.value))}
    >
      {props.versions.map((version) => (
        <option key={version.version} value={version.version}>
          v{version.version}
        </option>
      ))}
    </select>
  );
}

function Diff({ before, after }: { before: string; after: string }) {
  const lines = diffLines(before, after);
  if (!lines.some((line) => line.kind !== "same"))
    return <p class="muted">The two versions define the same workflow.</p>;
  return (
    <pre class="diff">
      {lines.map((line, index) => (
        <div key={index} class={`diff-${line.kind}`}>
          {line.kind === "added" ? "+ " : line.kind === "removed" ? "- " : "  "}
          {line.text}
        </div>
      ))}
    </pre>
  );
}
