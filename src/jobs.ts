// The job catalog: every domain's job definitions, handed to the queue at start.
import { confirmSnsSubscriptionJob } from "./alerts/confirm-sns.ts";
import type { JobDefinition } from "./core/queue/catalog.ts";

export const JOBS: JobDefinition[] = [confirmSnsSubscriptionJob];
