// `auto_investigate` on a registration: each newly created alert gets a deep-dive investigation.
// Investigations sit above alerts, so ingest cannot call them; it sends this job, in the
// transaction that writes the alert, and the investigations domain declares the same job name with
// its handler in the catalog (jobs.ts). Only the name and payload are alerts' contract.
import { Type } from "@sinclair/typebox";
import { defineJob } from "../../core/queue/catalog.ts";

export const AUTO_INVESTIGATE_JOB = defineJob({
  name: "investigations.auto_investigate",
  schema: Type.Object({
    alertId: Type.String(),
    orgId: Type.Union([Type.String(), Type.Null()]),
    ownerId: Type.String(),
  }),
  // Replaced in the catalog by the investigations domain's handler under the same name.
  handler: async () => {
    throw new Error("investigations.auto_investigate is handled by the investigations domain");
  },
});
