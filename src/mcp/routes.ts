import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../core/context.ts";
import { AppError } from "../core/errors.ts";
import { jsonText } from "../core/http/input-rules.ts";
import { jsonSyntaxReason } from "../core/json-syntax.ts";
import { createMcpServer } from "./server.ts";

const MCP_PATH = "/app/sre/mcp";
const VERSION = "0.1.0";

/** A body that is not JSON, kept so the route answers it in JSON-RPC (-32700), as MCP clients expect. */
class UnparsedBody {
  constructor(readonly reason: string) {}
}

/** The SRE app's MCP endpoint: Streamable HTTP, stateless, JSON answers. */
export async function mcpRoutes(app: FastifyInstance) {
  // In this plugin only: the API's JSON parser answers a syntax error with its own error body.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body: Buffer, done) => {
    const text = jsonText(body, request.headers["content-type"]);
    if (text instanceof AppError) {
      done(null, new UnparsedBody(text.message));
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(null, new UnparsedBody(jsonSyntaxReason(err)));
    }
  });
  app.post(
    MCP_PATH,
    {
      // Authenticated like every route (Bearer API key or app token, ?orgId); scopes per tool. Text
      // PostgreSQL cannot store is refused by the tools, as an error result naming the argument.
      config: { ownTextRules: true },
      schema: {
        operationId: "mcp",
        summary: "MCP server (Streamable HTTP, stateless): JSON-RPC requests of an MCP client",
        tags: ["apps"],
        hide: true,
      },
    },
    async (request, reply) => {
      if (request.body instanceof UnparsedBody) {
        return reply.status(400).send({
          jsonrpc: "2.0",
          error: { code: -32700, message: `Parse error: ${request.body.reason}` },
          id: null,
        });
      }
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
