import { createRoute, z } from "@hono/zod-openapi";
import { createRouter, errorResponses, jsonResponse, publish, security } from "../../../http/router.js";
import { ProjectParams } from "../../schema.js";
import { Snapshot } from "../schema.js";
import { listSnapshots } from "../service.js";

const route = createRoute({
  method: "get",
  path: "/projects/{project_id}/snapshots",
  operationId: "listSnapshots",
  tags: ["Snapshot"],
  summary: "The project's snapshots, oldest first (expired ones are gone)",
  security,
  request: { params: ProjectParams },
  responses: {
    200: jsonResponse(z.object({ snapshots: z.array(Snapshot) }), "The snapshots"),
    ...errorResponses,
  },
});

export default createRouter().openapi(route, (c) =>
  c.json(
    publish(c, listSnapshots(c.var.ctx, c.var.principal.accountId, c.req.valid("param").project_id)),
    200,
  ),
);
