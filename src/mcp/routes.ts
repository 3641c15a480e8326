import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../core/context.ts";
import { createMcpServer } from "./server.ts";

const MCP_PATH = "/app/sre/mcp";
const VERSION = "0.1.0";

/** The SRE app's MCP endpoint: Streamable HTTP, stateless, JSON answers. */
export async function mcpRoutes(app: FastifyInstance) {
  app.post(
    MCP_PATH,
    {
      // Authenticated like every route (Bearer API key or app token, ?orgId); scopes per tool.
      schema: {
        operationId: "mcp",
        summary: "MCP server (Streamable HTTP, stateless): JSON-RPC requests of an MCP client",
        tags: ["apps"],
        hide: true,
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      const server = createMcpServer(ctx, VERSION);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      reply.hijack();
      reply.raw.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );
  // Stateless: no server-initiated stream and no session to end.
  for (const method of ["GET", "DELETE"] as const) {
    app.route({
      method,
      url: MCP_PATH,
      schema: { operationId: `mcp${method === "GET" ? "Stream" : "End"}`, tags: ["apps"], hide: true },
      handler: async (_request, reply) =>
        reply
          .status(405)
          .header("allow", "POST")
          .send({
            jsonrpc: "2.0",
            error: { code: -32000, message: "Method not allowed: this MCP server is stateless; POST only" },
            id: null,
          }),
    });
  }
}
