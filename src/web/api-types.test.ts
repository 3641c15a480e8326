// The console is typed from web/src/api/schema.d.ts, generated from this checkout's /openapi.json:
// a route or schema change must come with the regenerated file (`npm run api-types`).
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { API_TYPES_FILE, generateApiTypes } from "../../web/scripts/api-types.ts";

it("web/src/api/schema.d.ts is generated from the current /openapi.json (else run npm run api-types)", async () => {
  const current = await generateApiTypes();
  expect(current).toContain('"/app/sre/api/v1/alerts"');
  expect(readFileSync(API_TYPES_FILE, "utf8") === current, "run `npm run api-types`").toBe(true);
});
