// The typed API client: every path, parameter and body comes from schema.d.ts, generated from
// Vigil's /openapi.json. Each request carries the signed-in key and the selected org.
import createClient, { type Middleware } from "openapi-fetch";
import { session } from "../session.ts";
import type { components, operations, paths } from "./schema";

export type Schemas = components["schemas"];
export type Alert = Schemas["AlertV1"];
/** The JSON answer of an operation. */
export type Answer<Op extends keyof operations> = operations[Op]["responses"] extends {
  200: { content: { "application/json": infer T } };
}
  ? T
  : never;
export type QueryOf<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;

/** An API error with the server's own message (both error bodies: `error` and platform `msg`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/**
 * Whether a request failed without an answer: the network or the server is down. fetch rejects with
 * a TypeError then, whose message each browser words its own way.
 */
export function isUnreachable(error: unknown): boolean {
  return (
    error instanceof TypeError && /failed to fetch|networkerror|load failed|network/i.test(error.message)
  );
}

/** Called when the key stops working, so the console returns to sign-in. */
let onUnauthenticated: () => void = () => {};
export function whenSignedOut(handler: () => void) {
  onUnauthenticated = handler;
}

const auth: Middleware = {
  onRequest({ request }) {
    const key = session.key();
    if (key) request.headers.set("authorization", `Bearer ${key}`);
    const org = session.org();
    if (!org) return request;
    const url = new URL(request.url);
    // Who the key is and which orgs it may act in do not depend on the org, and asking in one the
    // key may not act in (from a link) would answer 404: the shell checks the link's org against it.
    if (url.pathname === "/api/v1/me") return request;
    url.searchParams.set("orgId", org);
    return new Request(url, request);
  },
};

export const api = createClient<paths>({ baseUrl: location.origin });
api.use(auth);

/** Unwraps an answer: its data, or an ApiError carrying the server's message. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  const { response } = result;
  if (response.ok) return result.data as T;
  const body = (result.error ?? {}) as { error?: string; msg?: string; code?: string; errCode?: string };
  const message = body.error ?? body.msg ?? `${response.status} ${response.statusText}`;
  if (response.status === 401) onUnauthenticated();
  throw new ApiError(response.status, message, body.code ?? body.errCode ?? "");
}

/**
 * Saves what a GET answers as a file. A plain link cannot carry the key, so the file is fetched with
 * it and handed to the browser as a download.
 */
export async function download(path: string, fileName: string): Promise<void> {
  const url = new URL(path, location.origin);
  const org = session.org();
  if (org) url.searchParams.set("orgId", org);
  const response = await fetch(url, { headers: { authorization: `Bearer ${session.key() ?? ""}` } });
  if (!response.ok) {
    const text = await response.text();
    let body: unknown = { error: text };
    try {
      body = JSON.parse(text);
    } catch {}
    unwrap({ error: body, response });
  }
  const href = URL.createObjectURL(await response.blob());
  const link = document.createElement("a");
  link.href = href;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}
