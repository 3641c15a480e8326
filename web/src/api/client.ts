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
export type QueryOf<Op extends keyof operations> = operations[Op]["parameters"]["query"];

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

/** For an operation this Vigil serves only when a feature is on (not in the generated types yet). */
export async function callUntyped(method: string, path: string, body?: unknown): Promise<unknown> {
  const url = new URL(path, location.origin);
  const org = session.org();
  if (org) url.searchParams.set("orgId", org);
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${session.key() ?? ""}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { error: text };
  }
  return unwrap({ data: parsed, error: parsed, response });
}
