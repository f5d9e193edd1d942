import { createRoute } from "@hono/zod-openapi";
import {
  createRouter,
  errorResponses,
  jsonBody,
  jsonResponse,
  publish,
  security,
} from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { EndpointCreateRequest, EndpointOperations } from "../schema.js";
import { createEndpoint, projectMajor, requireSettingsTaken } from "../service.js";

const route = createRoute({
  method: "post",
  path: "/projects/{project_id}/endpoints",
  operationId: "createProjectEndpoint",
  tags: ["Endpoint"],
  summary: "Create an endpoint: init, heading for active, through a running start_compute",
  security,
  request: { params: ProjectParams, body: jsonBody(EndpointCreateRequest) },
  responses: {
    201: jsonResponse(EndpointOperations, "The new endpoint and its operations"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, async (c) => {
  const { ctx, principal } = c.var;
  const projectId = c.req.valid("param").project_id;
  const input = c.req.valid("json").endpoint;
  await requireSettingsTaken(ctx, projectMajor(ctx, principal.accountId, projectId), [
    input.settings?.pg_settings,
  ]);
  return c.json(publish(c, createEndpoint(ctx, principal.accountId, projectId, input)), 201);
});
