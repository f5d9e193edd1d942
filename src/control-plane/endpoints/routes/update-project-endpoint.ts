import { createRoute } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { EndpointParams } from "../../schema.js";
import { EndpointOperations, EndpointUpdateRequest } from "../schema.js";
import { projectMajor, requireSettingsTaken, updateEndpoint } from "../service.js";

const route = createRoute({
  method: "patch",
  path: "/projects/{project_id}/endpoints/{endpoint_id}",
  operationId: "updateProjectEndpoint",
  tags: ["Endpoint"],
  summary: "Update an endpoint (branch_id reassigns; a compute size change restarts a running endpoint)",
  security,
  request: { params: EndpointParams, body: jsonBody(EndpointUpdateRequest) },
  responses: { 200: jsonResponse(EndpointOperations, "The endpoint and its operations"), ...errorResponses },
});

export default createRouter().openapi(route, async (c) => {
  const { ctx, principal } = c.var;
  const p = c.req.valid("param");
  const input = c.req.valid("json").endpoint;
  await requireSettingsTaken(ctx, projectMajor(ctx, principal.accountId, p.project_id), [
    input.settings?.pg_settings,
  ]);
  return c.json(
    publish(c, updateEndpoint(ctx, principal.accountId, p.project_id, p.endpoint_id, input)),
    200,
  );
});
