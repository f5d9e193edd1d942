import { createHmac } from "node:crypto";
import { OpenAPIHono, type z } from "@hono/zod-openapi";
import type { Context, ErrorHandler } from "hono";
import type { Logger } from "pino";
import { currentUser } from "../../control-plane/accounts/service.js";
import type { Principal } from "../../control-plane/api-keys/service.js";
import { badRequest, EmulatorError } from "../../errors.js";
import type { AppEnv } from "../../http/app-env.js";
import { STATUS_OF } from "../../http/errors.js";
import { publish } from "../../http/router.js";
import type { Outcome } from "../../platform/events.js";
import { sameText } from "../../platform/ids.js";
import type { Session } from "../sessions.js";
import { ConfirmPage, fromFormValue, Layout, type PageContext } from "../views/layout.js";

/** The console's request variables: the API's, and the signed-in session. */
export interface ConsoleEnv {
  Variables: AppEnv["Variables"] & {
    session: Session;
    /** The POST was answered with a question (a confirmation page), not done. */
    asked?: boolean;
  };
}
export type ConsoleContext = Context<ConsoleEnv>;

export function createConsoleRouter() {
  return new OpenAPIHono<ConsoleEnv>();
}

export type BranchTab = "computes" | "roles" | "children" | "schema";

/** What each tab of a branch's page is drawn from. */
export interface BranchTabProps {
  c: ConsoleContext;
  page: PageContext;
  projectId: string;
  branchId: string;
}

export const branchPath = (projectId: string, branchId: string, tab?: BranchTab) =>
  `/app/projects/${projectId}/branches/${branchId}${tab ? `?tab=${tab}` : ""}`;

/** The session's account as a principal of the services (an account-wide one, as a personal key is). */
export function principalOf(c: ConsoleContext): Principal {
  return { accountId: c.var.session.accountId, keyId: 0, projectId: null };
}

export function accountOf(c: ConsoleContext): string {
  return c.var.session.accountId;
}

/**
 * A redirect's notice or error is signed with the session's CSRF token: a link made elsewhere
 * cannot put words in the console's mouth.
 */
const messageSignature = (session: Session, kind: "notice" | "error", text: string) =>
  createHmac("sha256", session.csrfToken).update(`${kind}\n${text}`).digest("base64url").slice(0, 22);

/** Sets a page's notice or error, signed for the session, on a redirect's URL. */
function setMessage(url: URL, session: Session, kind: "notice" | "error", text: string): void {
  url.searchParams.set(kind, text);
  url.searchParams.set("sig", messageSignature(session, kind, text));
}

/** A notice or error of the query, if this session's console put it there. */
function messageOf(c: ConsoleContext, kind: "notice" | "error"): string | undefined {
  const text = c.req.query(kind);
  const sig = c.req.query("sig");
  return text !== undefined && sig !== undefined && sameText(sig, messageSignature(c.var.session, kind, text))
    ? text
    : undefined;
}

/** What the layout needs, with the notice or error a redirect carried in its query. */
export function pageOf(c: ConsoleContext): PageContext {
  return {
    csrf: c.var.session.csrfToken,
    accountName: currentUser(c.var.ctx, c.var.session.accountId).name,
    notice: messageOf(c, "notice"),
    error: messageOf(c, "error"),
  };
}

/** A page's query, each value as it was before formValue (a GET form's selects carry names so). */
export function queryOf(c: ConsoleContext): Record<string, string> {
  return Object.fromEntries(
    Object.entries(c.req.query()).map(([name, value]) => [name, fromFormValue(value)]),
  );
}

/** The posted form's text fields (the CSRF middleware has read it already), each as it was before formValue. */
export async function formOf(c: ConsoleContext): Promise<Record<string, string>> {
  const body = await c.req.parseBody();
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(body))
    if (typeof value === "string") out[name] = fromFormValue(value);
  return out;
}

/** The console's names for the API fields its forms fill (by the field's own name, the path's last part). */
const FIELD_LABELS: Record<string, string> = {
  name: "Name",
  key_name: "Key name",
  region_id: "Region",
  pg_version: "Postgres version",
  default_endpoint_settings: "Compute defaults",
  autoscaling_limit_min_cu: "Minimum compute size",
  autoscaling_limit_max_cu: "Maximum compute size",
  suspend_timeout_seconds: "Suspend after",
  parent_timestamp: "Point in time",
  parent_lsn: "LSN",
  owner_name: "Owner",
  seconds: "Seconds",
  count: "Count",
  type: "Type",
};

/**
 * A service's message in the console's words: the API fields it names (`autoscaling_limit_min_cu`,
 * `parent_timestamp`) by the labels of the console's forms.
 */
export function consoleWords(message: string): string {
  return message.replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (name) => FIELD_LABELS[name] ?? name);
}

/**
 * Validates a service input with the API's own schema (the same rules as the API); a refusal
 * names the form's fields as the page labels them, not by their API paths.
 */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const parts = result.error.issues.map((issue) => {
    const field = issue.path.at(-1);
    const label = field === undefined ? undefined : (FIELD_LABELS[String(field)] ?? String(field));
    return label ? `${label}: ${issue.message}` : issue.message;
  });
  throw badRequest(`Check the form. ${parts.join("; ")}`);
}

/** A form field as a number, or undefined when empty. */
export function numberField(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  return Number(value);
}

/** Hands a service's events to the worker and returns its answer (as the API's routes do). */
export function run<T>(c: ConsoleContext, result: Outcome<T>): T {
  return publish(c as unknown as Context<AppEnv>, result);
}

/** The operation ids of an answer that started some, for the page that shows them. */
export function startedOps(body: { operations?: { id: string }[] }): string[] {
  return (body.operations ?? []).map((o) => o.id);
}

/** Post/redirect/get: back to a page, with a notice and the operations the action started. */
export function redirectTo(c: ConsoleContext, path: string, notice?: string, ops: string[] = []) {
  const url = new URL(path, "http://console");
  if (notice) setMessage(url, c.var.session, "notice", notice);
  if (ops.length) url.searchParams.set("ops", ops.join(","));
  return c.redirect(`${url.pathname}${url.search}`, 303);
}

/**
 * A destructive action goes ahead once confirmed: the script's dialog adds `confirm=yes`; without
 * the script the answer is a page asking, whose button posts the same form with it.
 */
export function unconfirmed(
  c: ConsoleContext,
  form: Record<string, string>,
  message: string,
  back: string,
): Response | Promise<Response> | undefined {
  if (form.confirm === "yes") return undefined;
  c.set("asked", true);
  const fields = { ...form };
  delete fields._csrf;
  delete fields.confirm;
  return c.html(
    <ConfirmPage page={pageOf(c)} message={message} action={c.req.path} fields={fields} back={back} />,
  );
}

/**
 * The console's errors: a refused action goes back to the page it came from with the reason
 * shown there; anything else is a page with the status. An unexpected error is logged and shown
 * as such (never its stack).
 */
export function consoleErrors(logger: Logger): ErrorHandler<ConsoleEnv> {
  return (err, c) => {
    if (!(err instanceof EmulatorError)) {
      logger.error({ err, requestId: c.get("requestId"), path: c.req.path }, "console: unhandled error");
      return c.html(
        <Layout title="Error">
          <h1>Something went wrong</h1>
          <p>The emulator's log has the details (request id {c.get("requestId")}).</p>
        </Layout>,
        500,
      );
    }
    const back = sameOriginReferer(c);
    const session = c.get("session") as Session | undefined;
    if (c.req.method === "POST" && back && session) {
      const url = new URL(back);
      url.searchParams.delete("notice");
      url.searchParams.delete("ops");
      setMessage(url, session, "error", consoleWords(err.message));
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    const status = STATUS_OF[err.code];
    return c.html(
      <Layout title="Error">
        <h1>{status === 404 ? "Not found" : "Request refused"}</h1>
        <p class="error" role="alert">
          {consoleWords(err.message)}
        </p>
        <p>
          <a href="/app/projects">Back to projects</a>
        </p>
      </Layout>,
      status,
    );
  };
}

function sameOriginReferer(c: ConsoleContext): string | undefined {
  const referer = c.req.header("referer");
  if (!referer) return undefined;
  try {
    const url = new URL(referer);
    return url.origin === new URL(c.req.url).origin && url.pathname.startsWith("/app/") ? referer : undefined;
  } catch {
    return undefined;
  }
}
