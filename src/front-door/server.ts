import type http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { within } from "../platform/clock.js";
import type { TlsIdentity } from "./certificates.js";
import { POOLER_DEFAULTS, Pooler } from "./pooler.js";
import { endPointBinding } from "./scram.js";
import { type DoorServices, type SessionContext, serveClient, type Transport } from "./session.js";
import { tls } from "./tls.js";
import { WebSocketGate } from "./websocket.js";

/** The longest a shutdown waits for sessions in the middle of a wake. */
const CLOSE_WAIT_MS = 30_000;
/** The longest a shutdown waits for relays to pass on their servers' last words. */
const CLOSE_RELAYS_MS = 1000;

export interface FrontDoorOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** When the port was not chosen by the user, a taken port is reported and a free one used instead. */
  portIsDefault: boolean;
  services: DoorServices;
  identity: TlsIdentity;
  handshakeTimeoutMs: number;
  /** Pooled clients per endpoint (PgBouncer's max_client_conn; Neon's is 10,000). */
  poolerMaxClients?: number;
  /** Clients that may be connected and not yet logged in at once; beyond, 53300 and a close. */
  maxUnauthenticated?: number;
  logger?: Logger;
}

/**
 * The Postgres port: Neon's proxy for the emulator's computes. Every connection is served by
 * session.ts (routing, authentication, wake) and then relayed to its compute. WebSocket tunnels
 * arriving on the HTTP port (`upgrade`) are served the same way.
 */
export class FrontDoor {
  private readonly sockets = new Set<Duplex>();
  private readonly sessions = new Set<Promise<void>>();
  private readonly websockets = new WebSocketGate((stream, transport) => this.serve(stream, transport));

  private constructor(
    private readonly server: net.Server,
    private readonly context: SessionContext,
    readonly host: string,
    readonly port: number,
  ) {
    server.on("connection", (socket: net.Socket) => this.serve(socket));
  }

  private serve(socket: Duplex, transport?: Transport): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    const session = serveClient(socket, this.context, transport);
    this.sessions.add(session);
    void session.finally(() => this.sessions.delete(session));
  }

  /** Logs out the pooler's idle server sessions of the endpoint on `database`. */
  closeIdle(endpointId: string, database: string): void {
    this.context.pooler?.closeIdle(endpointId, database);
  }

  /** Ends the pooled clients logged in as `roles` on the endpoint (the emulator ends their sessions). */
  endRoleClients(endpointId: string, roles: string[]): void {
    this.context.pooler?.endRoleClients(endpointId, roles);
  }

  /** An HTTP upgrade request on the emulator's HTTP port: the serverless driver's WebSocket tunnel. */
  upgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    this.websockets.upgrade(request, socket, head);
  }

  static async open(options: FrontDoorOptions): Promise<FrontDoor> {
    const context: SessionContext = {
      services: options.services,
      secureContext: tls().createSecureContext({ key: options.identity.key, cert: options.identity.cert }),
      channelBinding: endPointBinding(options.identity.certDer),
      cancelTargets: new Map(),
      handshakeTimeoutMs: options.handshakeTimeoutMs,
      unauthenticated: { count: 0, max: options.maxUnauthenticated ?? Number.POSITIVE_INFINITY },
      pooler: new Pooler(options.services, {
        ...POOLER_DEFAULTS,
        maxClients: options.poolerMaxClients ?? POOLER_DEFAULTS.maxClients,
        loginTimeoutMs: options.handshakeTimeoutMs,
      }),
      ...(options.logger ? { logger: options.logger } : {}),
    };
    const server = net.createServer();
    let port: number;
    try {
      port = await listen(server, options.host, options.port);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || !options.portIsDefault) throw err;
      port = await listen(server, options.host, 0);
      options.logger?.warn(
        { wanted: options.port, port },
        `port ${options.port} is taken: the Postgres front door listens on ${port} instead (connection URIs from the API carry it); set NEON_EMULATOR_PG_PORT to choose`,
      );
    }
    return new FrontDoor(server, context, options.host, port);
  }

  /**
   * Stops listening, ends every client connection and waits (at most CLOSE_WAIT_MS) for sessions
   * still waking their endpoint, so no compute starts after the driver has stopped the others.
   * Clients logged in hear what a compute's stop says (FATAL 57P01), not a bare end: their server
   * sessions are ended first, and the door waits (at most CLOSE_RELAYS_MS) for the relays to pass
   * that on.
   */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (this.sockets.size) await this.context.services.endClientSessions();
    this.context.pooler?.close();
    if (this.sockets.size) await within(allClosed(this.sockets), CLOSE_RELAYS_MS, undefined);
    const tunnels = this.websockets.close();
    for (const socket of this.sockets) socket.destroy();
    await within(Promise.allSettled([...this.sessions]), CLOSE_WAIT_MS, undefined);
    await Promise.all([closed, tunnels]);
  }
}

/** Resolves once every socket of the set (as it is now) has closed. */
function allClosed(sockets: Set<Duplex>): Promise<void> {
  return Promise.all(
    [...sockets].map((socket) =>
      socket.closed ? undefined : new Promise<void>((resolve) => socket.once("close", () => resolve())),
    ),
  ).then(() => {});
}

function listen(server: net.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}
