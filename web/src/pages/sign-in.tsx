import { useState } from "preact/hooks";
import { api, unwrap } from "../api/client.ts";
import { session } from "../session.ts";
import { ErrorBox } from "../ui.tsx";

/** Takes an API key, checks it against the API, and keeps it for this tab only. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    session.signIn(key.trim());
    try {
      unwrap(await api.GET("/api/v1/me"));
      onSignedIn();
    } catch (err) {
      session.signOut();
      setError(err);
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
        <ErrorBox error={error} />
        <button type="submit" disabled={busy || key.trim() === ""}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        <p class="muted small">
          The key stays in this browser tab and is forgotten when the tab closes. No key yet? Run{" "}
          <code>npx vigil keys create</code> on the server, or ask whoever runs Vigil.
        </p>
      </form>
    </div>
  );
}
