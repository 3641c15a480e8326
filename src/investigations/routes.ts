import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../core/context.ts";
import {
  ERROR_RESPONSE_REF as errorResponse,
  optionalBody,
  OrgOnlyQuery as Query,
  refOf,
  Uuid,
} from "../core/http/schemas.ts";
import { submitInvestigationEvidence, updateInvestigationStatus } from "./callbacks.ts";
import { investigateAlert } from "./investigate.ts";
import { getInvestigation, listInvestigations } from "./read-investigations.ts";
import { approveRemediation, rejectRemediation } from "./remediation/decide.ts";
import {
  EvidenceSubmission,
  InvestigateAlertRequest,
  InvestigateResponse,
  Investigation,
  ListInvestigationsQuery,
  ListInvestigationsResponse,
  RemediationApproval,
  RemediationRejection,
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
      ...optionalBody,
      schema: {
        operationId: "investigateAlert",
        tags,
        description:
          "The first call creates the alert's investigation and launches its workflow run; a repeat returns the newest one unchanged; force_new creates a new one forked from the newest (parent_investigation_id)",
        params: IdParams,
        querystring: Query,
        body: refOf(InvestigateAlertRequest),
        response: {
          200: refOf(InvestigateResponse),
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
          200: refOf(ListInvestigationsResponse),
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
          "sre_update_investigation_status, for an external investigating agent: running, then completed or failed with its summary, hypotheses and plain summary (when given, all four of its fields). A blank hypothesis statement or plain summary text is a 400 naming the field; a final investigation answers 409",
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
          "sre_submit_investigation_evidence: cited links, appended in order. verified and captured_at are set by Vigil; a URL that is not absolute http(s), or a blank title, is a 400 naming the field. A final investigation (completed, failed, cancelled) answers 409",
        params: IdParams,
        querystring: Query,
        body: refOf(EvidenceSubmission),
        response: { 200: refOf(Investigation), 404: errorResponse, 409: errorResponse },
      },
    },
    async (request) =>
      submitInvestigationEvidence({
        ctx: contextOf(request),
        input: { id: request.params.id, body: request.body },
      }),
  );

  app.post(
    "/app/sre/api/v1/investigations/:id/remediation/approve",
    {
      config: { scope: "sre_investigations_write" },
      ...optionalBody,
      schema: {
        operationId: "approveInvestigationRemediation",
        tags,
        description:
          "Approves the investigation's proposed change (triage_metadata.remediation, status proposed) and pushes it as a new branch of its git integration's remote; nothing is pushed without this call. Approving an approved change answers it unchanged; no proposal, or a rejected one, is 409; a push the remote refuses is 503 and the proposal stands",
        params: IdParams,
        querystring: Query,
        body: refOf(RemediationApproval),
        response: { 200: refOf(Investigation), 404: errorResponse, 409: errorResponse, 503: errorResponse },
      },
    },
    async (request) =>
      approveRemediation({ ctx: contextOf(request), input: { id: request.params.id, body: request.body } }),
  );

  app.post(
    "/app/sre/api/v1/investigations/:id/remediation/reject",
    {
      config: { scope: "sre_investigations_write" },
      ...optionalBody,
      schema: {
        operationId: "rejectInvestigationRemediation",
        tags,
        description:
          "Declines the investigation's proposed change: nothing is pushed. Rejecting a rejected change answers it unchanged; no proposal, or an approved one, is 409",
        params: IdParams,
        querystring: Query,
        body: refOf(RemediationRejection),
        response: { 200: refOf(Investigation), 404: errorResponse, 409: errorResponse },
      },
    },
    async (request) =>
      rejectRemediation({ ctx: contextOf(request), input: { id: request.params.id, body: request.body } }),
  );
}
