// Shared by the execution tests: a loopback HTTP server with scripted answers, helpers that register
// agents and approved workflows and start runs as a given API key's owner, and the run's trace as
// GET /platform/api/v1/executions/:traceId shows it.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { type StartExecutionInput, startExecution } from "../src/automation/executions/executions.ts";
import { findActiveKey } from "../src/core/auth/keys.ts";
import { workContext } from "../src/core/context.ts";
import { type Auth, call, type Harness, waitFor } from "./harness.ts";

export { type Auth, call };
export type Owner = { key: string; auth: Auth };

export interface Loopback {
  url: string;
  /** Requests received, by path (without the query). */
  hits: Map<string, number>;
  bodies: string[];
  /** Resolves once the client gave up a request held on /slow (/slow never answers). */
  dropped: Promise<void>;
  close(): Promise<void>;
}

export async function startLoopback(): Promise<Loopback> {
  let markDropped = () => {};
  const dropped = new Promise<void>((resolve) => {
    markDropped = resolve;
  });
  const hits = new Map<string, number>();
  const bodies: string[] = [];
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    let body = "";
    for await (const chunk of req) body += chunk;
    bodies.push(body);
    if (path === "/ok") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ status: "firing", count: 2, echo: body ? JSON.parse(body) : null }));
    } else if (path === "/nul") {
      // Text PostgreSQL cannot store, as a monitoring API may answer it: U+0000 and a lone surrogate.
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"message":"disk \\u0000 full","note":"\\ud800"}');
    } else if (path === "/fail") {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("boom");
    } else if (path === "/slow") {
      res.on("close", markDropped);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    bodies,
    dropped,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

export async function registerAgent(
  h: Harness,
  auth: Auth,
  body: { name: string; [field: string]: unknown },
) {
  const response = await call(h, auth, "POST", "/platform/api/v1/agents", { kind: "builtin", ...body });
  expect(response.statusCode, response.body).toBe(201);
}

/** Creates a workflow and approves its version 1; returns the approved workflow. */
export async function createApprovedWorkflow(
  h: Harness,
  auth: Auth,
  body: { name: string; [field: string]: unknown },
) {
  const created = await call(h, auth, "POST", "/platform/api/v1/workflows", body);
  expect(created.statusCode, created.body).toBe(201);
  const approved = await call(h, auth, "POST", `/platform/api/v1/workflows/${body.name}/versions/1/approve`);
  expect(approved.statusCode, approved.body).toBe(200);
  return approved.json();
}

/**
 * An approved investigation workflow that hands the investigation to an external agent: one
 * http_request stage to `url`, taking the investigation and alert ids as inputs.
 */
export function createHandOffWorkflow(h: Harness, auth: Auth, name: string, url: string) {
  return createApprovedWorkflow(h, auth, {
    name,
    inputs: [
      { name: "investigation_id", required: true },
      { name: "alert_id", required: true },
    ],
    stages: [{ id: "hand_off", action_type: "http_request", config: { url } }],
  });
}

/** Starts a run in the key owner's personal namespace, as a webhook or Ask would. */
export async function startAs(h: Harness, owner: Owner, input: StartExecutionInput) {
  const found = await findActiveKey(h.vigil.services.database.db, owner.key);
  if (!found) throw new Error("unknown key");
  return startExecution({
    ctx: workContext(h.vigil.services, h.vigil.log),
    tenant: { orgId: null, ownerId: found.userId },
    input,
  });
}

export const uniqueName = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

/** The run's trace (execution, nodes, edges), read as the key's owner; expects 200. */
export async function readTrace(h: Harness, auth: Auth, traceId: string) {
  const response = await call(h, auth, "GET", `/platform/api/v1/executions/${traceId}`);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** Polls the trace until the run is finished for polling purposes (final status and settled). */
export const settledTrace = (h: Harness, auth: Auth, traceId: string) =>
  waitFor(async () => {
    const body = await readTrace(h, auth, traceId);
    return body.execution.status !== "running" && body.execution.trace_settled ? body : undefined;
  });

/** A trace node as expected: its `status` follows from `state`; first attempt, no error, no cost, unless `fields` say otherwise. */
export const traceNode = (id: string, type: string, label: string, state: string, fields: object = {}) => ({
  id,
  type,
  label,
  status: state === "success" ? "success" : state === "error" || state === "skipped" ? "error" : "running",
  state,
  attempt: 1,
  error: null,
  cost: 0,
  ...fields,
});
