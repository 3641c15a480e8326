import { useState } from "preact/hooks";
import { ApiError, api, unwrap } from "../api/client.ts";
import { session } from "../session.ts";
import { ErrorBox, useTitle } from "../ui.tsx";

/** Takes an API key, checks it against the API, and keeps it for this tab only. */
export function SignIn({ onSignedIn, notice }: { onSignedIn: () => void; notice?: string | null }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useTitle("Sign in");
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    session.signIn(key.trim());
    try {
      session.setReads(unwrap(await api.GET("/api/v1/me")));
      onSignedIn();
    } catch (err) {
      session.signOut();
      // The API's words are about an Authorization header this form fills in for the user.
      setError(
        err instanceof ApiError && err.status === 401
          ? new Error("That API key was not accepted: it is unknown, revoked or mistyped.")
          : err,
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="signin">
      <form onSubmit={submit} class="card">
        <h1>
          <span class="dot" aria-hidden="true" /> Vigil
        </h1>
        <label>
          API key
          <input
            type="password"
            name="apiKey"
            autoComplete="current-password"
            required
            value={key}
            onInput={(event) => setKey(event.currentTarget.value)}
            placeholder="vgl_…"
          />
        </label>
        {notice && !error ? (
          <p class="notice" role="status">
            {notice}
          </p>
        ) : null}
        <ErrorBox error={error} />
        <button type="submit" disabled={busy || key.trim() === ""}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p class="muted small">
          The key stays in this browser tab and is forgotten when the tab closes. No key yet? Stop Vigil and
          run <code>node bin/vigil.js keys create</code> in its checkout (or start it with{" "}
          <code>BOOTSTRAP_API_KEY</code>), or ask whoever runs Vigil.
        </p>
      </form>
    </div>
  );
}
