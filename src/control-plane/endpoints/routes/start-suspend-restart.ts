import { createRoute } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../../http/router.js";
import { EndpointParams } from "../../schema.js";
import { EndpointOperations } from "../schema.js";
import { changeEndpointState } from "../service.js";

const VERBS = {
  start: { operationId: "startProjectEndpoint", summary: "Start an endpoint (start_compute)" },
  suspend: { operationId: "suspendProjectEndpoint", summary: "Suspend an endpoint (suspend_compute)" },
  restart: {
    operationId: "restartProjectEndpoint",
    summary: "Restart an endpoint (suspend_compute, then start_compute)",
  },
} as const;

/** start, suspend and restart take no body: any body and content type are ignored. */
function stateRoute(verb: keyof typeof VERBS) {
  const route = createRoute({
    method: "post",
    path: `/projects/{project_id}/endpoints/{endpoint_id}/${verb}`,
    ...VERBS[verb],
    tags: ["Endpoint"],
    security,
    request: { params: EndpointParams },
    responses: {
      200: jsonResponse(EndpointOperations, "The endpoint and its operations"),
      ...errorResponses,
    },
  });
  return createRouter().openapi(route, (c) => {
    const p = c.req.valid("param");
    return c.json(
      publish(
        c,
        changeEndpointState(c.var.ctx, c.var.principal.accountId, p.project_id, p.endpoint_id, verb),
      ),
      200,
    );
  });
}

export const start = stateRoute("start");
export const suspend = stateRoute("suspend");
export const restart = stateRoute("restart");
