/**
 * Requests on a project another account shares with the caller's user run as that project's
 * owner, so every lookup and rule below the route is the owner's; deleting or transferring the
 * project stays the owner's alone (403). Projects neither owned nor shared keep answering 404 from the services.
 */
import type { MiddlewareHandler } from "hono";
import { sharedOwner } from "../control-plane/permissions/service.js";
import { forbidden } from "../errors.js";
import type { AppEnv } from "./app-env.js";
import { PROJECT_PATH } from "./project-scope.js";

/** A path segment as the router hands it to the route (an undecodable one is left as it is). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** For routes mounted under `base` (/api/v2, /_emulator). */
export function sharedProjects(base: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const principal = c.var.principal;
    const match = principal && PROJECT_PATH.exec(c.req.path.slice(base.length));
    const projectId = match?.[1];
    if (principal && projectId !== undefined && projectId !== "shared" && !principal.projectId) {
      const rest = match?.[2];
      // Accepting a transfer request is the recipient's own act: it runs as the caller.
      const accepting = c.req.method === "PUT" && rest?.startsWith("/transfer_requests/");
      const owner = accepting
        ? undefined
        : sharedOwner(c.var.ctx, principal.accountId, decoded(projectId), c.req.raw);
      if (owner !== undefined) {
        if (rest === undefined && c.req.method === "DELETE")
          throw forbidden(`project ${projectId} is shared with you; only its owner can delete it`);
        if (rest === "/transfer_requests" || rest === "/transfer_requests/")
          throw forbidden(`project ${projectId} is shared with you; only its owner can transfer it`);
        c.set("principal", { ...principal, accountId: owner });
      }
    }
    await next();
  };
}
