import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonBody, security } from "../../../http/router.js";
import { ProjectTransferRequestAccept, TransferRequestParams } from "../schema.js";
import { acceptTransferRequest } from "../service.js";

const route = createRoute({
  method: "put",
  path: "/projects/{project_id}/transfer_requests/{request_id}",
  operationId: "acceptProjectTransferRequest",
  tags: ["Project"],
  summary: "Accept a transfer request: the project moves into the caller's organization",
  security,
  request: { params: TransferRequestParams, body: jsonBody(ProjectTransferRequestAccept) },
  responses: { 204: { description: "Accepted" }, ...errorResponses },
});

export default createRouter().openapi(route, (c) => {
  const { project_id, request_id } = c.req.valid("param");
  acceptTransferRequest(
    c.var.ctx,
    c.var.principal.accountId,
    project_id,
    request_id,
    c.req.valid("json").org_id,
  );
  return c.body(null, 204);
});
