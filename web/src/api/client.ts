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
 * How long a read may go unanswered before it counts as "Vigil is not reachable". A working Vigil
 * answers the console's reads in well under a second, a loaded one in a few; 20 s is two missed list
 * refreshes (every 10 s), so a hung Vigil (frozen, or behind a network that drops packets) is said to
 * be one soon, without failing a read that is only slow.
 */
export const READ_TIMEOUT_MS = 20_000;
/**
 * How long a change (or a download, up to 10 MiB) may take. Longer than a read: a write does more
 * (Investigate starts a run), and giving up on one leaves whether it was applied unknown.
 */
export const WRITE_TIMEOUT_MS = 60_000;

/** A request Vigil did not answer in time: aborted, so it does not hold a refresh or a button. */
export class NoAnswerError extends Error {
  constructor(readonly write: boolean) {
    super(
      write
        ? "Vigil did not answer in time: the change may or may not have been applied. Reload the page to check before trying again."
        : "Vigil did not answer in time.",
    );
  }
}

/**
 * Whether a request failed without an answer: the network or the server is down (fetch rejects with
 * a TypeError then, whose message each browser words its own way), or a read timed out. A write that
 * timed out is not: its outcome is unknown, which its own message says.
 */
export function isUnreachable(error: unknown): boolean {
  if (error instanceof NoAnswerError) return !error.write;
  return (
    error instanceof TypeError && /failed to fetch|networkerror|load failed|network/i.test(error.message)
  );
}

/**
 * Whether Vigil is out for now, not refusing the request: no answer, or a 502/503/504 (Vigil answers
 * 503 while its database is unreachable or at its connection limit, and while it shuts down). What
 * is on screen stays, marked old, and the next refresh may succeed.
 */
export function isOutage(error: unknown): boolean {
  return isUnreachable(error) || (error instanceof ApiError && [502, 503, 504].includes(error.status));
}

/**
 * Runs a request with a deadline: past `ms` it is aborted and fails with NoAnswerError. A timer and
 * an AbortController rather than AbortSignal.timeout, so that a test's fake clock can drive it.
 */
async function withDeadline<T>(ms: number, write: boolean, run: (signal: AbortSignal) => Promise<T>) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    return await run(controller.signal);
  } catch (error) {
    throw controller.signal.aborted ? new NoAnswerError(write) : error;
  } finally {
    clearTimeout(timer);
  }
}

/** Statuses whose answer has no body (a Response with one cannot be made). */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * The client's fetch: every request has a deadline, reads the shorter. The body is read within it
 * too, as a server that stalls mid-answer is as hung as a silent one. Callers pass no signal of
 * their own (this one would replace it).
 */
async function fetchWithDeadline(request: Request): Promise<Response> {
  const write = request.method !== "GET" && request.method !== "HEAD";
  return withDeadline(write ? WRITE_TIMEOUT_MS : READ_TIMEOUT_MS, write, async (signal) => {
    const response = await fetch(request, { signal });
    const body = NO_BODY.has(response.status) ? null : await response.arrayBuffer();
    return new Response(body, response);
  });
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

export const api = createClient<paths>({ baseUrl: location.origin, fetch: fetchWithDeadline });
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
  const headers = { authorization: `Bearer ${session.key() ?? ""}` };
  // A read, but a large one: the whole file within the write's longer deadline.
  const { response, blob } = await withDeadline(WRITE_TIMEOUT_MS, false, async (signal) => {
    const response = await fetch(url, { headers, signal });
    return { response, blob: await response.blob() };
  });
  if (!response.ok) {
    const text = await blob.text();
    let body: unknown = { error: text };
    try {
      body = JSON.parse(text);
    } catch {}
    unwrap({ error: body, response });
  }
  const href = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = href;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}
