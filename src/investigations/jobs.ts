// `investigations.auto_investigate`: sent by alert ingest (alerts' AUTO_INVESTIGATE_JOB, same name
// and payload) for each alert a registration with auto_investigate creates. An alert that already
// has an investigation keeps it (a retried job creates nothing twice).
import { AUTO_INVESTIGATE_JOB } from "../alerts/index.ts";
import { defineJob } from "../core/queue/catalog.ts";
import { startInvestigation } from "./investigate.ts";

export const autoInvestigateJob = defineJob({
  ...AUTO_INVESTIGATE_JOB,
  // A storm queues one job per alert: fetch them in batches (fetching again while batches come back
  // full) so the backlog drains without waiting a polling interval per alert, and start at most two
  // at once so investigations never crowd out ingest. Each investigation's run has its own jobs.
  concurrency: 2,
  batchSize: 20,
  // An alert's investigation starts when its delivery commits, not at the next poll (1.2 s later
  // on average). Under a storm every commit wakes the workers: a fetch that came back short waits
  // 200 ms before the next, so the jobs sent meanwhile come in one fetch.
  notify: true,
  minFetchIntervalMs: 200,
  handler: async ({ ctx, data }) => {
    await startInvestigation({
      ctx,
      tenant: { orgId: data.orgId, ownerId: data.ownerId },
      input: {
        alertId: data.alertId,
        request: {},
        trigger: "auto_investigate",
        requestedBy: "auto_investigate",
      },
    });
  },
});
