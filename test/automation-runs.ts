// Shared by the execution tests: a loopback HTTP server with scripted answers, and helpers that
// register agents and approved workflows and start runs as a given API key's owner.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { type StartExecutionInput, startExecution } from "../src/automation/executions/executions.ts";
import { findActiveKey } from "../src/core/auth/keys.ts";
import type { Harness } from "./harness.ts";

export type Auth = { authorization: string };
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

export function call(h: Harness, auth: Auth, method: "GET" | "POST" | "PUT", url: string, payload?: object) {
  return h.vigil.app.inject({ method, url, headers: auth, payload: payload as never });
}

export async function registerAgent(
  h: Harness,
  auth: Auth,
  body: { name: string; [field: string]: unknown },
) {
  const response = await call(h, auth, "POST", "/platform/api/v1/agents", { kind: "builtin", ...body });
  expect(response.statusCode, response.body).toBe(201);
}

export async function createApprovedWorkflow(
  h: Harness,
  auth: Auth,
  body: { name: string; [field: string]: unknown },
) {
  const created = await call(h, auth, "POST", "/platform/api/v1/workflows", body);
  expect(created.statusCode, created.body).toBe(201);
  const approved = await call(h, auth, "POST", `/platform/api/v1/workflows/${body.name}/versions/1/approve`);
  expect(approved.statusCode, approved.body).toBe(200);
}

/** Starts a run in the key owner's personal namespace, as a webhook or Ask would. */
export async function startAs(h: Harness, owner: Owner, input: StartExecutionInput) {
  const { database, queue, now } = h.vigil.services;
  const found = await findActiveKey(database.db, owner.key);
  if (!found) throw new Error("unknown key");
  return startExecution({
    ctx: { db: database.db, tenant: { orgId: null, ownerId: found.userId }, queue, now },
    input,
  });
}

export const uniqueName = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
