/** The investigator's steps, registered with the engine as action types (investigator/steps.ts). */
export const STEP_ACTIONS = {
  gather: "sre.investigation_gather",
  queryIntegrations: "sre.investigation_query_integrations",
  priorIncidents: "sre.investigation_prior_incidents",
  conclude: "sre.investigation_conclude",
} as const;
