import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import v8 from "node:v8";
import { signInLink } from "./console/sessions.js";
import { ensureDefaultAccount } from "./control-plane/accounts/service.js";
import { type Env, EnvError, readEnv } from "./env.js";
import type { FrontDoor } from "./front-door/server.js";
import { answerClientError, refuseConnect } from "./http/client-errors.js";
import { RealClock } from "./platform/clock.js";
import { requireFromPackage } from "./platform/package-root.js";
import { claimDatabase, DatabaseInUse } from "./platform/server-lock.js";
import { buildRuntime, openFrontDoor, type Runtime } from "./runtime.js";
import { SeedError } from "./seed/apply.js";

/**
 * Entry point: read env -> open db -> migrate -> createApp -> serve -> start worker.
 *
 * `npm run build` also turns this bundle into a V8 start-up snapshot (`node --build-snapshot`):
 * every module is evaluated once at build time, and `npm start` begins from that heap instead of
 * compiling and evaluating ~1 MB of JavaScript at every start. Hence the rules for code outside
 * functions: nothing that depends on the run (environment, time, randomness, paths, open files)
 * may happen at import, and what cannot live in a snapshot (better-sqlite3's native addon, the
 * HTTP adapter with node:http) is loaded from node_modules at run time. (The builder warns that
 * node:module and worker_threads are not verified in snapshots; `npm run build` silences that:
 * createRequire is only called at run time, and pino imports worker_threads for transports, which
 * the emulator does not use.) The snapshot fits only the node binary that built it: after
 * changing Node.js, run `npm run build` again.
 */
function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}

/**
 * Reads the environment and builds the runtime. A configuration problem (a variable, a seed
 * file) ends the process with its message and status 2; anything else with its stack and 1,
 * printed here because node's own report of an uncaught error quotes the offending line of the
 * minified bundle, tens of kilobytes long.
 */
function start(): { env: Env; runtime: Runtime } {
  try {
    const env = readEnv();
    claimDatabase(env.NEON_EMULATOR_DB);
    return { env, runtime: buildRuntime(env) };
  } catch (err) {
    if (err instanceof EnvError || err instanceof SeedError || err instanceof DatabaseInUse) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(
      `neon-emulator could not start: ${err instanceof Error ? err.stack : String(err)}\n`,
    );
    process.exit(1);
  }
}

/** What to tell the user when HOST names no address of this machine, or null for another failure. */
function hostProblem(env: Env, code: string | undefined): string | null {
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return `HOST ${env.HOST} does not resolve (${code}): set HOST to an address of this machine, e.g. 127.0.0.1 or 0.0.0.0\n`;
  if (code === "EADDRNOTAVAIL")
    return `HOST ${env.HOST} is not an address of this machine (${code}): set HOST to one, e.g. 127.0.0.1 or 0.0.0.0\n`;
  return null;
}

/** Opens the Postgres front door; a port the user chose that cannot be had ends the start (status 2). */
async function frontDoor(env: Env, runtime: Runtime): Promise<FrontDoor | null> {
  try {
    return await openFrontDoor(runtime, env);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    process.stderr.write(
      code === "EADDRINUSE" || code === "EACCES"
        ? `NEON_EMULATOR_PG_PORT ${env.NEON_EMULATOR_PG_PORT} on ${env.HOST} cannot be used (${code}): choose a free port (0 picks one)\n`
        : (hostProblem(env, code) ??
            `neon-emulator could not open the Postgres front door: ${err instanceof Error ? err.stack : String(err)}\n`),
    );
    runtime.storage.close();
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const { env, runtime } = start();
  const door = await frontDoor(env, runtime);
  const { serve } = requireFromPackage()("@hono/node-server") as typeof import("@hono/node-server");
  const { logger, storage, driver, worker, app } = runtime;
  if (runtime.generatedKeys.length) {
    // The console's "generate key" moment: shown once, never stored or logged in plain text.
    const lines = runtime.generatedKeys.map((k) => `  ${k.key}   (${k.account}, "${k.name}")`);
    process.stdout.write(
      `\nAPI keys were generated for this new database. They are shown only this once:\n\n${lines.join("\n")}\n\n` +
        "Use one as: Authorization: Bearer <key>\n\n",
    );
  }
  const server = serve(
    {
      fetch: app.fetch,
      port: env.PORT,
      hostname: env.HOST,
      // A client gets seconds, not minutes, to send its headers (408 after) and its whole request;
      // the deadlines are checked every second rather than Node's default 30.
      serverOptions: { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000 },
    },
    (info) => {
      logger.info(
        {
          url: `http://${env.HOST}:${info.port}/api/v2`,
          db: env.NEON_EMULATOR_DB,
          clock: env.NEON_EMULATOR_CLOCK,
          compute: env.NEON_EMULATOR_COMPUTE,
          ...(door ? { postgres: `${door.host}:${door.port}` } : {}),
        },
        "neon-emulator listening",
      );
      printConsoleLink(runtime, env.HOST, info.port);
      worker.start();
      runtime.metering?.start();
      void driver.resume().catch((err) => logger.error({ err }, "could not resume the computes"));
      storage.startCheckpoints(1000);
      if (!isLoopback(env.HOST))
        logger.warn(
          { host: env.HOST },
          env.NEON_EMULATOR_SEED === undefined
            ? "listening beyond loopback with the demo seed: its keys are derived from a public string; " +
                "revoke them (npm run keys -- list / revoke) or start with NEON_EMULATOR_SEED=none"
            : "listening beyond loopback: anyone who reaches this address can try keys against the API " +
                "and connect to the computes; the emulator is meant for one machine or a trusted network",
        );
    },
  );
  // Beyond the cap Node closes a new connection at once: idle and slow clients hold bounded memory.
  (server as Server).maxConnections = env.NEON_EMULATOR_MAX_CONNECTIONS;
  server.on("clientError", answerClientError);
  server.on("connect", refuseConnect);
  // The serverless driver's WebSocket tunnels (Neon's `/v2`) share the HTTP port, as on Neon.
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (door) door.upgrade(request, socket, head);
    else socket.destroy();
  });
  server.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EADDRINUSE")
      process.stderr.write(
        `port ${env.PORT} on ${env.HOST} is in use: set PORT to a free port (0 picks one)` +
          (runtime.generatedKeys.length ? "; the keys printed above are saved and stay valid\n" : "\n"),
      );
    const problem = hostProblem(env, err.code);
    if (problem) process.stderr.write(problem);
    else logger.fatal({ err }, "server failed");
    storage.close();
    process.exit(1);
  });
  let stopping: string | undefined;
  const shutdown = (signal: string) => {
    if (stopping) {
      // Asked again with the same signal (a second Ctrl-C) while the shutdown waits (on an effect
      // under way, a compute's server): the servers end at once, their work cut short, and the
      // emulator with them. Another signal (a SIGTERM after a SIGINT) lets it finish.
      if (signal !== stopping) return;
      logger.warn({ signal }, "shutting down at once");
      void (driver.closeNow?.() ?? Promise.resolve())
        .catch(() => {})
        .finally(() => {
          storage.close();
          process.exit(1);
        });
      return;
    }
    stopping = signal;
    logger.info({ signal }, "shutting down");
    // What the shutdown waits on: the requests being answered, then the operations under way, then the computes' servers.
    let waitingFor: "requests" | "operations" | "computes" = "requests";
    // A shutdown held up (an effect waiting on a lock a client's session holds) says on what, and how to cut it short.
    setTimeout(() => {
      const again = `${signal} again stops every compute at once`;
      if (waitingFor === "operations")
        logger.warn(
          { signal, operations: worker.underWay() },
          `the shutdown still waits for the operations under way; ${again}`,
        );
      else if (waitingFor === "computes")
        logger.warn({ signal }, `the shutdown still waits for the computes' servers to stop; ${again}`);
      else logger.warn({ signal }, `the shutdown still waits for requests being answered; ${again}`);
    }, SLOW_SHUTDOWN_MS).unref();
    worker.stop();
    driver.stopping?.();
    // The front door closes first: its WebSocket tunnels are upgraded connections of the HTTP
    // server, which waits for them to end before it calls back.
    const doorClosed = door?.close();
    server.close(async () => {
      // Effects under way finish and are recorded before the driver and the database close.
      await doorClosed;
      await runtime.sql?.close();
      // What the closed connections sent is recorded, and a measure under way ends, before the servers stop.
      await runtime.metering?.stop();
      waitingFor = "operations";
      await worker.drain();
      waitingFor = "computes";
      await driver.close();
      storage.close();
      process.exit(0);
    });
    // Requests being answered get their answers (a branch create waiting for its copy has made the
    // branch: cut off, its client would retry into a 409). Keep-alive connections close as soon as
    // they are idle (node keeps an answered one open for its keep-alive timeout), and whatever still
    // holds one open after the grace (a slow upload, a long query over /sql) is cut.
    const http = server as { closeIdleConnections?: () => void; closeAllConnections?: () => void };
    http.closeIdleConnections?.();
    const closingIdle = setInterval(() => http.closeIdleConnections?.(), 50).unref();
    setTimeout(() => {
      clearInterval(closingIdle);
      http.closeAllConnections?.();
    }, REQUEST_GRACE_MS).unref();
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  // The shell gone after a signal npm got: stop as that signal asked, unless already stopping (a
  // signal to the whole process group reached the emulator too; that is no second signal).
  stopWithNpmStart(() => {
    if (!stopping) shutdown("SIGTERM");
  });
}

/**
 * Under `npm start`, npm passes a SIGTERM or SIGINT it gets to the shell running the start script,
 * and a shell such as Debian's /bin/sh ends without passing it on: the emulator, left behind with
 * its computes, shuts down as if signalled once that shell is gone (its parent process changes).
 * Only for this package's own start script: a server a script started in the background on
 * purpose (`node dist/main.cjs &`) outlives its shell. (Windows gives an orphan no new parent.)
 */
function stopWithNpmStart(stop: () => void): void {
  if (process.env.npm_lifecycle_event !== "start" || process.env.npm_package_name !== "neon-emulator") return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    stop();
  }, PARENT_CHECK_MS);
  watch.unref();
}

/** When a shutdown still under way says what it waits for. */
const SLOW_SHUTDOWN_MS = 5000;
/** How long a shutdown lets the requests under way finish before it closes their connections. */
const REQUEST_GRACE_MS = 3000;

/** How often the parent is looked at under `npm start` (a getppid call). */
const PARENT_CHECK_MS = 500;

/**
 * The web console's one-time sign-in link, printed (never logged) at every start, as Jupyter
 * prints its token: it signs a browser in as the default account.
 */
function printConsoleLink(runtime: Runtime, host: string, port: number): void {
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const account = ensureDefaultAccount(runtime.ctx);
  const link = signInLink(runtime.ctx.db, account.id, `http://${shown}:${port}`, new RealClock().now(null));
  process.stdout.write(
    `\nWeb console: ${link.url}\n  (a one-time sign-in link, valid for a day; POST /_emulator/console/sign-in-link makes another)\n\n`,
  );
}

function run(): void {
  void main();
}

if (v8.startupSnapshot.isBuildingSnapshot()) v8.startupSnapshot.setDeserializeMainFunction(run);
else run();
