// Alert sources: each registration's trigger URL (a secret: shown on request) and the snippet that
// points the source at it; a form to register another.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "preact/hooks";
import { api, type Schemas, unwrap } from "../api/client.ts";
import type { Caller } from "../app.tsx";
import { SOURCES, sourceOf } from "../sources.ts";
import { CopyButton, Empty, ErrorBox, Loading, sendOnEnter, Time, useTitle } from "../ui.tsx";

type Registration = Schemas["AlertWebhook"];
type RegistrationBody = Schemas["AlertWebhookCreate"];
const APP = { path: { app_name: "sre" } };

export function RegistrationsPage({ caller }: { caller: Caller }) {
  const list = useQuery({
    queryKey: ["registrations"],
    queryFn: async () => unwrap(await api.GET("/app/{app_name}/api/v1/alerts/webhook", { params: APP })),
  });
  const canWrite = caller.scopes.includes("sre_alerts_write");
  useTitle("Sources");
  return (
    <section>
      <h1>Alert sources</h1>
      <p class="muted">
        Each registration has a trigger URL: point the source at it and its alerts arrive in the console.
      </p>
      {canWrite ? <NewRegistration /> : null}
      <ErrorBox error={list.error} />
      {list.isPending ? (
        <Loading />
      ) : list.data?.length === 0 ? (
        <Empty title="No sources yet.">
          Register your first source above: pick the monitoring tool and a name for it.
        </Empty>
      ) : (
        list.data?.map((registration) => (
          <RegistrationCard key={registration.id} registration={registration} canWrite={canWrite} />
        ))
      )}
    </section>
  );
}

/**
 * The body the form asks for, read from the form itself when it is sent: the typed value, even when
 * Enter comes before the render of the last keystroke (state, or a closure over it, may be one render
 * behind, and useMutation takes a new mutationFn only after the next paint).
 */
function registrationOf(form: HTMLFormElement): RegistrationBody {
  const fields = new FormData(form);
  const integration = String(fields.get("integration") ?? "").trim();
  return {
    source: String(fields.get("source")) as Registration["source"],
    ...(integration ? { integration } : {}),
  };
}

function NewRegistration() {
  const client = useQueryClient();
  const [source, setSource] = useState<Registration["source"]>("alertmanager");
  const [integration, setIntegration] = useState("");
  const create = useMutation({
    mutationFn: async (body: RegistrationBody) =>
      unwrap(await api.POST("/app/{app_name}/api/v1/alerts/webhook", { params: APP, body })),
    onSuccess: () => {
      setIntegration("");
      client.invalidateQueries({ queryKey: ["registrations"] });
    },
  });
  return (
    <form
      class="card inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        create.mutate(registrationOf(event.currentTarget));
      }}
    >
      <label>
        Source
        <select
          name="source"
          value={source}
          onChange={(event) => setSource(event.currentTarget.value as Registration["source"])}
          onKeyDown={sendOnEnter}
        >
          {SOURCES.map((s) => (
            <option key={s.name} value={s.name}>
              {s.title}
            </option>
          ))}
        </select>
      </label>
      <label>
        Integration name
        <input
          name="integration"
          placeholder="e.g. prod (optional)"
          value={integration}
          onInput={(event) => setIntegration(event.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={create.isPending}>
        Register
      </button>
      <ErrorBox error={create.error} />
    </form>
  );
}

function RegistrationCard({ registration, canWrite }: { registration: Registration; canWrite: boolean }) {
  const client = useQueryClient();
  const [shown, setShown] = useState(false);
  const source = sourceOf(registration.source);
  const url = registration.trigger_url;
  const masked = url.replace(/(apiKey=)[^&]+/, "$1••••••••");
  const rotate = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST("/app/{app_name}/api/v1/alerts/webhook/{id}/rotate-token", {
          params: { path: { app_name: "sre", id: registration.id } },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ["registrations"] }),
  });
  return (
    <article class="card registration" data-source={registration.source}>
      <header>
        <h2>
          {source?.title ?? registration.source} <span class="muted">/ {registration.integration}</span>
        </h2>
        <span class="muted small">
          {registration.enabled ? "enabled" : "disabled"} · classify {registration.classify_mode} · created{" "}
          <Time at={registration.created_at} />
        </span>
      </header>
      <div class="trigger">
        <code class="url">{shown ? url : masked}</code>
        <button type="button" class="small" onClick={() => setShown(!shown)}>
          {shown ? "Hide" : "Show"}
        </button>
        <CopyButton text={url} label="Copy URL" />
        {canWrite ? (
          <button
            type="button"
            class="small ghost"
            onClick={() => {
              if (confirm("Rotate the token? The old trigger URL stops working at once.")) rotate.mutate();
            }}
          >
            Rotate token
          </button>
        ) : null}
      </div>
      <ErrorBox error={rotate.error} />
      {source ? (
        <details>
          <summary>Configure {source.title}</summary>
          <p class="small muted">{source.where}</p>
          {/* Masked like the URL above until Show: the token is in the page only once asked for. */}
          <pre class="snippet">{source.snippet(shown ? url : masked)}</pre>
          <CopyButton text={source.snippet(url)} label="Copy snippet" />
        </details>
      ) : null}
    </article>
  );
}
