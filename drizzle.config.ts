// `npx drizzle-kit generate` writes the next SQL migration from the domain tables.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/**/tables.ts",
  out: "./src/core/migrations",
});
