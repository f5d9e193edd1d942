import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { secureHeaders } from "hono/secure-headers";
import type { Logger } from "pino";
import type { Clock } from "../../platform/clock.js";
import { sameText } from "../../platform/ids.js";
import { ASSETS } from "../assets.js";
import { forgetOnce, giveOnceBack, takeOnce } from "../once.js";
import { endSession, findSession, redeemSignInToken, SESSION_MS } from "../sessions.js";
import { Layout } from "../views/layout.js";
import branches from "./branches.js";
import computes from "./computes.js";
import emulatorPanel from "./emulator.js";
import keys from "./keys.js";
import monitoring from "./monitoring.js";
import projects from "./projects.js";
import rolesDatabases from "./roles-databases.js";
import sql, { type ConsoleSql } from "./sql.js";
import { type ConsoleEnv, consoleErrors, createConsoleRouter } from "./support.js";

export type { ConsoleSql } from "./sql.js";

/** The session cookie: HttpOnly, SameSite=Strict, scoped to the console's paths. */
export const SESSION_COOKIE = "neon_console";

export interface ConsoleOptions {
  logger: Logger;
  /** Sessions expire on wall time, whatever the emulator's clock. */
  wallClock: Clock;
  /** Runs the SQL editor's statements (the SQL-over-HTTP path), when computes are real. */
  sql?: ConsoleSql | undefined;
}

/**
 * The web console at /app: server-rendered pages over the same services the API calls. Nothing
 * but the sign-in page and the two assets answers without a session; every POST carries the
 * session's CSRF token and comes from the console's own origin.
 */
export function createConsole(options: ConsoleOptions) {
  const { wallClock } = options;
  const router = createConsoleRouter();

  // Pages load only the console's own stylesheet and script, no site may frame them, and
  // forms post only to the console.
  router.use(
    "*",
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        frameAncestors: ["'none'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
      referrerPolicy: "same-origin",
      crossOriginResourcePolicy: "same-origin",
      strictTransportSecurity: false,
      xFrameOptions: "DENY",
    }),
  );

  router.get("/assets/:name", (c) => {
    const asset = ASSETS.get(c.req.param("name"));
    if (!asset) return c.text("not found", 404);
    const headers = { etag: asset.etag, "cache-control": "public, max-age=3600" };
    if (c.req.header("if-none-match") === asset.etag) return c.body(null, 304, headers);
    return c.body(asset.body, 200, { ...headers, "content-type": asset.type });
  });

  router.get("/sign-in", (c) => {
    const token = c.req.query("token");
    const redeemed = token ? redeemSignInToken(c.var.ctx.db, token, wallClock.now(null)) : undefined;
    if (!redeemed)
      return c.html(
        <Layout title="Sign in">
          <h1>Sign in to the Neon emulator</h1>
          {token && (
            <p class="error" role="alert">
              This sign-in link was used already or has expired.
            </p>
          )}
          <p>
            Open the sign-in link the emulator printed when it started (each link works once, for a day). For
            another link, restart the emulator, or ask for one with an API key:
          </p>
          <pre>{`curl -X POST -H "Authorization: Bearer $NEON_API_KEY" ${new URL(c.req.url).origin}/_emulator/console/sign-in-link`}</pre>
        </Layout>,
        token ? 401 : 200,
      );
    setCookie(c, SESSION_COOKIE, redeemed.cookie, {
      httpOnly: true,
      sameSite: "Strict",
      path: "/app",
      maxAge: SESSION_MS / 1000,
    });
    return c.redirect("/app/projects", 303);
  });

  router.use("*", requireSession(wallClock));

  router.post("/sign-out", (c) => {
    const cookie = getCookie(c, SESSION_COOKIE);
    if (cookie) endSession(c.var.ctx.db, cookie);
    forgetOnce(c.var.session.csrfToken);
    deleteCookie(c, SESSION_COOKIE, { path: "/app" });
    return c.redirect("/app/sign-in", 303);
  });
  router.get("/", (c) => c.redirect("/app/projects", 303));
  router.route("/", projects);
  router.route("/", branches);
  router.route("/", computes);
  router.route("/", rolesDatabases);
  router.route("/", monitoring);
  router.route("/", keys);
  router.route("/", sql(options.sql));
  router.route("/", emulatorPanel);
  // The top app's not-found (the API's JSON) answers for a mounted router: every path left is the console's.
  router.all("*", (c) =>
    c.html(
      <Layout title="Not found">
        <h1>Not found</h1>
        <p>
          No console page at <code>{c.req.path}</code>. <a href="/app/projects">Projects</a>
        </p>
      </Layout>,
      404,
    ),
  );
  router.onError(consoleErrors(options.logger));
  return router;
}

/** A console address opened with a method it does not take (a form's address opened as a page): a page, 405. */
export function consoleMethodNotAllowed(c: Context, methods: string[]) {
  return c.html(
    <Layout title="Not a page">
      <h1>Not a page</h1>
      <p>
        <code>{c.req.path}</code> is where a form is sent, not a page to open.{" "}
        <a href="/app/projects">Projects</a>
      </p>
    </Layout>,
    405,
    { Allow: methods.join(", "), "Cache-Control": "no-store" },
  );
}

/**
 * Every page needs a session: without one a page sends the browser to sign in and a POST is
 * refused. A POST must also come from the console's origin and carry the session's CSRF token
 * (a form on another site, even one on this host under another port, has neither).
 */
function requireSession(wallClock: Clock): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const cookie = getCookie(c, SESSION_COOKIE);
    const session = cookie ? findSession(c.var.ctx.db, cookie, wallClock.now(null)) : undefined;
    const post = c.req.method === "POST";
    if (!session) {
      if (!post) return c.redirect("/app/sign-in", 303);
      return refused(c, 401, "You are not signed in (or your session has ended). Sign in again.");
    }
    c.set("session", session);
    let once: string | undefined;
    if (post) {
      const origin = c.req.header("origin");
      const crossSite = c.req.header("sec-fetch-site") === "cross-site";
      if (crossSite || (origin !== undefined && origin !== new URL(c.req.url).origin))
        return refused(c, 403, "This form was sent from another site: refused.");
      const form = await c.req.parseBody();
      const token = typeof form._csrf === "string" ? form._csrf : "";
      if (!sameText(token, session.csrfToken))
        return refused(c, 403, "The form's CSRF token is missing or wrong: reload the page and try again.");
      once = typeof form._once === "string" ? form._once : undefined;
      if (once !== undefined && !takeOnce(session.csrfToken, once, wallClock.now(null)))
        return refused(
          c,
          409,
          "This form was sent already (a reload, or Back and send again): it was not done a second time. Its answer was the page shown then.",
        );
    }
    await next();
    if (once !== undefined && c.get("asked")) giveOnceBack(session.csrfToken, once);
    // A signed-in page (a password shown, an API key just made) is kept by no cache: after
    // signing out, Back shows the sign-in page, not the page as it was.
    c.header("Cache-Control", "no-store");
  };
}

function refused(c: Parameters<MiddlewareHandler<ConsoleEnv>>[0], status: 401 | 403 | 409, message: string) {
  return c.html(
    <Layout title="Refused">
      <h1>Refused</h1>
      <p class="error" role="alert">
        {message}
      </p>
      <p>
        <a href="/app/projects">Back to the console</a>
      </p>
    </Layout>,
    status,
  );
}
