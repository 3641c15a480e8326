// Ask: a task in plain words. The answer names the candidates it weighed; a missing input is asked for
// in a form whose answer continues the same session; a started run shows its trace while it runs.
import { useMutation } from "@tanstack/react-query";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, type Schemas, unwrap } from "../api/client.ts";
import type { Caller } from "../app.tsx";
import { Link } from "../router.tsx";
import { TraceGraph } from "../trace.tsx";
import { ErrorBox, shortId, useTitle } from "../ui.tsx";

type AskAnswer = Schemas["AskStartResponse"];
type AskBody = Schemas["AskPlatformRequest"];

const DECISION: Record<AskAnswer["decision"], string> = {
  routed: "Started",
  pinned: "Started the chosen target",
  continued: "Continued the session",
  fallback: "Handed to the fallback agent",
  ambiguous: "More than one fits: pick one",
  no_match: "Nothing fits this request",
  inputs_required: "Needs more input",
};

type AskRequest = Partial<AskBody> & { message: string };

export function AskPage({ caller }: { caller: Caller }) {
  const [message, setMessage] = useState("");
  useTitle("Ask");
  // The answer with the request it answers: Use this sends that request again, pinned, since what
  // the user asked for (and the inputs it names) is in the request, not in Ask's reply.
  const [shown, setShown] = useState<{ answer: AskAnswer; request: string } | null>(null);
  const ask = useMutation({
    mutationFn: async (body: AskRequest) =>
      unwrap(
        await api.POST("/platform/api/v1/platform/ask/start", {
          body: { candidate_type: "any", ...body },
        }),
      ),
    onSuccess: (answer, body) => setShown({ answer, request: body.message }),
  });
  return (
    <section class="ask">
      <h1>Ask</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (message.trim()) ask.mutate({ message });
        }}
      >
        <textarea
          name="message"
          aria-label="What should Vigil do?"
          placeholder="e.g. restart the checkout deployment in prod-eu (Shift+Enter: new line)"
          rows={3}
          value={message}
          // Enter asks, as in a chat; Shift+Enter starts a new line.
          onKeyDown={(event) => {
            if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
            event.preventDefault();
            event.currentTarget.form?.requestSubmit();
          }}
          onInput={(event) => setMessage(event.currentTarget.value)}
        />
        <button type="submit" disabled={ask.isPending || !message.trim()}>
          Ask
        </button>
      </form>
      <ErrorBox error={ask.error} />
      {shown ? (
        <AskResult
          key={`${shown.answer.session_id}-${shown.answer.trace_id}-${shown.answer.decision}`}
          answer={shown.answer}
          request={shown.request}
          busy={ask.isPending}
          caller={caller}
          send={(body) => ask.mutate({ ...body, session_id: shown.answer.session_id })}
        />
      ) : null}
    </section>
  );
}

function AskResult(props: {
  answer: AskAnswer;
  /** The message this answer answers: what Use this runs the chosen candidate with. */
  request: string;
  busy: boolean;
  send: (body: AskRequest) => void;
  caller: Caller;
}) {
  const { answer } = props;
  const [values, setValues] = useState<Record<string, string>>({});
  const form = useRef<HTMLFormElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  // A missing input takes the focus, so the answer can be typed at once; an answer that replaced
  // the control that asked (Continue, Use this) takes it itself, so the focus is not lost. Before the
  // next paint, so that keys typed at once land in the field.
  useLayoutEffect(() => {
    const first = form.current?.querySelector("input");
    if (first) first.focus();
    else if (document.activeElement === document.body) heading.current?.focus();
  }, []);
  return (
    <div class="ask-result">
      <h2 class="decision" data-decision={answer.decision} ref={heading} tabIndex={-1}>
        {DECISION[answer.decision]}
        {answer.plan ? <span class="muted small"> · {answer.plan}</span> : null}
      </h2>
      {answer.message ? <p>{answer.message}</p> : null}
      {answer.candidates.length > 0 ? (
        <div class="table-scroll">
          <table class="list candidates">
            <thead>
              <tr>
                <th>Candidate</th>
                <th>Kind</th>
                <th>Confidence</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {answer.candidates.map((c) => (
                <tr key={`${c.candidate_type}-${c.name}`} class="candidate">
                  <td>{c.name}</td>
                  <td>{c.candidate_type}</td>
                  <td>{Math.round(c.confidence * 100)}%</td>
                  <td>
                    {answer.decision === "ambiguous" || answer.decision === "no_match" ? (
                      <button
                        type="button"
                        class="ghost"
                        disabled={props.busy}
                        onClick={() =>
                          props.send({
                            message: props.request,
                            entity_refs: [{ name: c.name, type: c.candidate_type as "agent" | "workflow" }],
                          })
                        }
                      >
                        Use this
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {Object.keys(answer.extracted).length > 0 ? (
        <p class="muted small">
          Read from the request:{" "}
          {Object.entries(answer.extracted)
            .map(([name, value]) => `${name}=${value}`)
            .join(", ")}
        </p>
      ) : null}
      {answer.inputs_required.length > 0 ? (
        <form
          ref={form}
          class="inputs-form"
          onSubmit={(event) => {
            event.preventDefault();
            const inputs = Object.fromEntries(
              answer.inputs_required.map((name) => [name, values[name] ?? ""]),
            );
            props.send({
              message: Object.entries(inputs)
                .map(([name, value]) => `${name}=${value}`)
                .join(" "),
              inputs,
            });
          }}
        >
          <p>Missing inputs:</p>
          {answer.inputs_required.map((name) => (
            <label key={name}>
              {name}{" "}
              <input
                name={name}
                required
                value={values[name] ?? ""}
                onInput={(event) => setValues({ ...values, [name]: event.currentTarget.value })}
              />
            </label>
          ))}
          <button type="submit" disabled={props.busy}>
            Continue
          </button>
        </form>
      ) : null}
      {answer.session_id ? (
        <p class="muted small">
          Session <Link href={`/sessions/${answer.session_id}`}>{shortId(answer.session_id)}</Link>
        </p>
      ) : null}
      {answer.trace_id ? <TraceGraph traceId={answer.trace_id} live={false} caller={props.caller} /> : null}
    </div>
  );
}
