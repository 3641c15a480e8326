import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { InvestigationRef } from "../alerts/index.ts";
import { contextOf } from "../core/context.ts";
import {
  ERROR_RESPONSE_REF as errorResponse,
  OrgOnlyQuery as Query,
  refOf,
  Uuid,
} from "../core/http/schemas.ts";
import { submitInvestigationEvidence, updateInvestigationStatus } from "./callbacks.ts";
import { investigateAlert } from "./investigate.ts";
import { getInvestigation, listInvestigations } from "./read-investigations.ts";
import {
  EvidenceSubmission,
  InvestigateAlertRequest,
  Investigation,
  ListInvestigationsQuery,
  StatusUpdate,
} from "./schemas.ts";

export async function investigationRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["investigations"];
  const IdParams = Type.Object({ id: Uuid() });

  app.post(
    "/app/sre/api/v1/alerts/:id/investigate",
    {
      config: { scope: "sre_investigations_write" },
      // The body is optional: a request without one investigates with the defaults.
      preValidation: async (request) => {
        if (request.body === undefined || request.body === null) request.body = {};
      },
      schema: {
        operationId: "investigateAlert",
        tags,
        description:
          "The first call creates the alert's investigation and launches its workflow run; a repeat returns the newest one unchanged; force_new creates a new one forked from the newest (parent_investigation_id)",
        params: IdParams,
        querystring: Query,
        body: refOf(InvestigateAlertRequest),
        response: {
          200: Type.Object({ investigation: refOf(InvestigationRef) }, { $id: "InvestigateResponse" }),
          404: errorResponse,
        },
      },
    },
    async (request) =>
      investigateAlert({
        ctx: contextOf(request),
        input: { alertId: request.params.id, request: request.body },
      }),
  );

  app.get(
    "/app/sre/api/v1/investigations",
    {
      config: { scope: "sre_investigations_read" },
      schema: {
        operationId: "listInvestigations",
        tags,
        querystring: ListInvestigationsQuery,
        response: {
          200: Type.Object(
            {
              investigations: Type.Array(refOf(Investigation)),
              page: Type.Integer(),
              page_size: Type.Integer(),
              total: Type.Integer({ description: "Investigations matching the filters, all pages" }),
            },
            { $id: "ListInvestigationsResponse", description: "Newest started_at first" },
          ),
        },
      },
    },
    async (request) => listInvestigations({ ctx: contextOf(request), input: request.query }),
  );

  app.get(
    "/app/sre/api/v1/investigations/:id",
    {
      config: { scope: "sre_investigations_read" },
      schema: {
        operationId: "getInvestigation",
        tags,
        params: IdParams,
        querystring: Query,
        response: { 200: refOf(Investigation), 404: errorResponse },
      },
    },
    async (request) => getInvestigation({ ctx: contextOf(request), input: request.params }),
  );

  app.post(
    "/app/sre/api/v1/investigations/:id/status",
    {
      config: { scope: "sre_investigations_write" },
      schema: {
        operationId: "updateInvestigationStatus",
        tags,
        description:
          "sre_update_investigation_status, for an external investigating agent: running, then completed or failed with its summary, hypotheses and plain summary. A final investigation answers 409",
        params: IdParams,
        querystring: Query,
        body: refOf(StatusUpdate),
        response: { 200: refOf(Investigation), 404: errorResponse, 409: errorResponse },
      },
    },
    async (request) =>
      updateInvestigationStatus({
        ctx: contextOf(request),
        input: { id: request.params.id, body: request.body },
      }),
  );

  app.post(
    "/app/sre/api/v1/investigations/:id/evidence",
    {
      config: { scope: "sre_investigations_write" },
      schema: {
        operationId: "submitInvestigationEvidence",
        tags,
        description:
          "sre_submit_investigation_evidence: cited links, appended in order. verified and captured_at are set by Vigil; a URL that is not absolute http(s) is a 400 naming the field",
        params: IdParams,
        querystring: Query,
        body: refOf(EvidenceSubmission),
        response: { 200: refOf(Investigation), 404: errorResponse },
      },
    },
    async (request) =>
      submitInvestigationEvidence({
        ctx: contextOf(request),
        input: { id: request.params.id, body: request.body },
      }),
  );
}
