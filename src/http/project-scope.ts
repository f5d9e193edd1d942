/**
 * What an organization API key made for one project (`project_id`) may reach: that project and
 * everything under it, and the read-only answers about the caller (/users/me, /auth, /regions).
 * Another project is not found (404, as for another account's objects); creating or deleting a
 * project, the organization, keys, consumption and the emulator's account-wide controls are
 * refused with 403. One table of path prefixes, checked before any route runs.
 */
import type { MiddlewareHandler } from "hono";
import { projectNotFound } from "../control-plane/access.js";
import { forbidden } from "../errors.js";
import type { AppEnv } from "./app-env.js";

/** Paths (after the base) a project-scoped key may use whatever its method. */
const OPEN = [/^\/users\/me(\/organizations)?$/, /^\/auth$/, /^\/regions$/, /^\/projects\/shared$/];
/**
 * `/projects/{project_id}` and below (the id, then the rest of the path); `auth` is the legacy
 * Neon Auth family, not a project id. Shared with shared-projects.ts.
 */
export const PROJECT_PATH = /^\/projects\/([^/]+)(\/.*)?$/;

/** Neon's text for a project-scoped key reaching beyond its project (`what` says what was refused). */
const refuse = (projectId: string, what: string) =>
  forbidden(
    `not allowed to perform actions outside the project this key is scoped to (it cannot ${what}); subject_project_id:"${projectId}"`,
  );

/** For routes mounted under `base` (/api/v2, /_emulator). */
export function projectScope(base: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const scope = c.var.principal?.projectId;
    if (scope) check(scope, c.req.method, c.req.path.slice(base.length), base === "/_emulator");
    await next();
  };
}

function check(scope: string, method: string, path: string, emulator: boolean): void {
  if (!emulator && OPEN.some((re) => re.test(path))) return;
  if (!emulator && path === "/projects") {
    if (method === "POST") throw refuse(scope, "create projects");
    return; // the list shows the one project (list-projects.ts)
  }
  if (emulator && path === "/clock" && method === "GET") return;
  const match = PROJECT_PATH.exec(path);
  const projectId = match?.[1];
  if (projectId === undefined || (!emulator && projectId === "auth"))
    throw refuse(scope, emulator ? "act on the whole account" : "act on the organization");
  if (projectId !== scope) throw projectNotFound(projectId);
  if (!emulator && match?.[2] === undefined && method === "DELETE") throw refuse(scope, "delete its project");
  if (!emulator && method === "POST" && /^\/transfer_requests\/?$/.test(match?.[2] ?? ""))
    throw refuse(scope, "transfer its project");
}
