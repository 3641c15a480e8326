// Serves the built console (dist/web, made by `npm run build:web`) from the API's own process. The
// page is the same for every client route, so a shared link (/alerts/<id>) opens the right screen;
// only the console's own paths are claimed, never /api, /app, /platform, /docs or the probes.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { routeNotFound } from "../core/http/error-handler.ts";
import { CONSOLE_DIR_URL } from "../core/package-files.ts";

/** Where `npm run build:web` writes the console. */
export const CONSOLE_DIR = fileURLToPath(CONSOLE_DIR_URL);

/** The console's screens; each answers the page, which routes on the client. */
export const CONSOLE_ROUTES = [
  "/",
  "/signin",
  "/alerts",
  "/alerts/:id",
  "/registrations",
  "/workflows",
  "/workflows/:id",
  "/agents",
  "/agents/:id",
  "/investigations",
  "/investigations/:id",
  "/ask",
  "/sessions",
  "/sessions/:id",
] as const;

// The page loads only its own scripts and styles and talks only to this origin.
const PAGE_POLICY =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Vigil</title>
<p>The web console is not built. Run <code>npm run build:web</code> (or <code>npm install</code>) in Vigil's
checkout, then reload this page: a running Vigil serves the new build without a restart.
The API is served as usual; its reference is at <a href="/docs">/docs</a>.</p>`;

export async function consoleFileRoutes(app: FastifyInstance, options: { root?: string }): Promise<void> {
  const root = options.root ?? CONSOLE_DIR;
  await app.register(fastifyStatic, { root, serve: false });

  const page = (reply: FastifyReply) => {
    reply.header("cache-control", "no-cache").header("content-security-policy", PAGE_POLICY);
    reply.header("x-content-type-options", "nosniff").header("referrer-policy", "no-referrer");
    // Looked up on each request: a build made while Vigil runs is served without a restart.
    if (!existsSync(join(root, "index.html"))) return reply.status(503).type("text/html").send(NOT_BUILT);
    return reply.sendFile("index.html", root, { cacheControl: false });
  };
  for (const url of CONSOLE_ROUTES) {
    app.get(url, { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
      page(reply),
    );
  }
  // Any other path: a browser that navigates there (a mistyped or outdated link) gets the page with
  // status 404, whose own "not available" screen links back to the console; an API client gets the
  // API's 404, as on every unknown route.
  app.get("/*", { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    if (!isPageNavigation(request)) {
      throw routeNotFound(request);
    }
    reply.status(404);
    return page(reply);
  });
  // Vite names every asset by its content hash: a file never changes, so it may be cached for good.
  app.get<{ Params: { "*": string } }>(
    "/assets/*",
    { config: { public: true }, schema: { hide: true } },
    async (request, reply) => {
      const file = request.params["*"];
      // A path that climbs out of the folder (`..%2f..%2fpackage.json`) names no asset.
      if (file.split(/[\\/]/).includes("..")) return reply.callNotFound();
      return reply.sendFile(file, join(root, "assets"), { immutable: true, maxAge: "365d" });
    },
  );
  app.get("/favicon.svg", { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
    reply.sendFile("favicon.svg", root),
  );
}

/** Paths a browser never navigates to as a page: the APIs, files, the reference and the probes. */
const NOT_PAGES = /^\/(api|app|platform|assets|docs|openapi\.json|healthz|readyz|metrics)(\/|$)/;

function isPageNavigation(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? "";
  return accept.includes("text/html") && !NOT_PAGES.test(request.url);
}
