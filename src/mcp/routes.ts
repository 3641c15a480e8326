import type { FastifyInstance } from "fastify";
export async function mcpRoutes(_app: FastifyInstance) {}
