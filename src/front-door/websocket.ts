import type http from "node:http";
import { Duplex } from "node:stream";
import type { WebSocket, WebSocketServer } from "ws";
import { requireFromPackage } from "../platform/package-root.js";
import type { Transport } from "./session.js";

type WsModule = typeof import("ws");

let loaded: WsModule | undefined;

/** The `ws` package, loaded at run time (it holds node:http and node:net, which a start-up snapshot cannot). */
function ws(): WsModule {
  loaded ??= requireFromPackage()("ws") as WsModule;
  return loaded;
}

/** The largest WebSocket message taken from a client (one carries what the driver wrote at once). */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/**
 * The largest before the client logged in: its start-up and password messages, and the first
 * query when the driver pipelines them in one message. A larger one closes the tunnel (1009) at
 * its frame's header, before it is held (60 MB frames of unauthenticated tunnels were held whole).
 */
const PRE_LOGIN_MESSAGE_BYTES = 1024 * 1024;

/** What Neon's proxy answers a text frame with: the tunnel carries Postgres bytes only. */
export const TEXT_FRAME = "unexpected text message in the websocket";

/**
 * The serverless driver's WebSocket tunnel, on the HTTP port: every upgrade request (Neon's path
 * is `/v2`; any path is taken, as the proxy does) becomes a byte stream served by the front door
 * like a TCP connection. The endpoint may be named by the host the client asked for: the
 * `address` parameter a driver's `wsProxy` setting adds (`?address=<host>:<port>`), else the Host
 * header; otherwise by the start-up `options` or the password, as over TCP.
 */
export class WebSocketGate {
  private readonly server: WebSocketServer;
  private readonly clients = new Set<WebSocket>();

  constructor(private readonly serve: (stream: Duplex, transport: Transport) => void) {
    this.server = new (ws().WebSocketServer)({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  }

  upgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", () => {});
    let serverName: string | undefined;
    try {
      serverName = requestedHost(request);
    } catch {
      // A request target no URL parser takes (`http://[/v2`): no tunnel.
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    this.server.handleUpgrade(request, socket, head, (client) => {
      this.clients.add(client);
      client.once("close", () => this.clients.delete(client));
      const peer = request.socket.remoteAddress;
      maxMessage(client, PRE_LOGIN_MESSAGE_BYTES);
      this.serve(new Tunnel(client), {
        websocket: true,
        ...(serverName ? { serverName } : {}),
        ...(peer ? { peer } : {}),
        loggedIn: () => maxMessage(client, MAX_MESSAGE_BYTES),
      });
    });
  }

  /**
   * Ends every tunnel (a shutdown): each is closed, and one whose peer has not answered the close
   * within `graceMs` is cut off, where `ws` would wait 30 s for it (and the HTTP server, whose
   * connections the tunnels are, with it).
   */
  async close(graceMs = CLOSE_GRACE_MS): Promise<void> {
    const open = [...this.clients];
    if (open.length === 0) return;
    const closed = Promise.all(open.map((c) => new Promise((resolve) => c.once("close", resolve))));
    for (const client of open) if (client.readyState === client.OPEN) client.close(1001);
    const late = setTimeout(() => {
      for (const client of open) client.terminate();
    }, graceMs);
    await closed;
    clearTimeout(late);
  }
}

/** How long a shutdown waits for a tunnel's peer to answer its close. */
const CLOSE_GRACE_MS = 1000;

/**
 * Sets the largest message a tunnel takes from now on. `ws` has no public setting per socket: its
 * receiver's limit, which it checks at each frame's header (ws 8).
 */
function maxMessage(client: WebSocket, bytes: number): void {
  const receiver = (client as unknown as { _receiver?: { _maxPayload?: number } })._receiver;
  if (receiver && typeof receiver._maxPayload === "number") receiver._maxPayload = bytes;
}

/**
 * A WebSocket as a byte stream: binary messages in, binary messages out, with back-pressure both
 * ways. A text message closes it (1003). Ending the stream closes the WebSocket cleanly; `ws`
 * drops a peer that does not answer the close in time.
 */
class Tunnel extends Duplex {
  constructor(private readonly socket: WebSocket) {
    super();
    socket.on("error", () => {}); // ends through 'close'
    socket.on("message", (data: Buffer, isBinary) => {
      if (!isBinary) {
        socket.close(1003, TEXT_FRAME);
        this.push(null);
      } else if (!this.push(data)) socket.pause();
    });
    socket.on("close", () => {
      this.push(null);
      this.destroy();
    });
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.socket.readyState === this.socket.OPEN)
      this.socket.send(chunk, { binary: true }, (err) => done(err ?? null));
    else done(new Error("the WebSocket is closed"));
  }

  override _final(done: (err?: Error | null) => void): void {
    this.socket.close(1000);
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.close(1000);
    else if (this.socket.readyState === this.socket.CONNECTING) this.socket.terminate();
    done(err);
  }
}

/** The host name of `?address=<host>:<port>`, else of the Host header (no port, no IPv6 brackets). */
export function requestedHost(request: http.IncomingMessage): string | undefined {
  const url = new URL(request.url ?? "/", "http://localhost");
  const address = url.searchParams.get("address") ?? request.headers.host;
  if (!address) return undefined;
  const host = address.startsWith("[") ? address.slice(1, address.indexOf("]")) : address.split(":")[0];
  return host || undefined;
}
