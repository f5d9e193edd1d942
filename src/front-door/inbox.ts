import { Duplex } from "node:stream";
import type tlsTypes from "node:tls";
import { wallNow } from "../platform/clock.js";
import { tls } from "./tls.js";
import { Frames, ProtocolError } from "./wire.js";

/** The ALPN protocol of a Postgres connection (Postgres 17+). */
export const POSTGRES_ALPN = "postgresql";

/** The peer went away, or did not finish its start-up in time. */
export class ClientGone extends Error {}

/** Reads start-up phase messages from a socket (plain, then perhaps TLS): a client's, or a compute's during login. */
export class Inbox {
  readonly frames = new Frames();
  private notify: (() => void) | undefined;
  private gone = false;
  private socket: Duplex;
  private readonly onData = (chunk: Buffer) => {
    this.frames.push(chunk);
    this.notify?.();
  };
  private readonly onGone = () => {
    this.gone = true;
    this.notify?.();
  };

  private readonly deadline: number;

  constructor(socket: Duplex, timeoutMs: number) {
    this.socket = socket;
    // A duration, not a time of the emulator's clock: real time bounds a real client.
    this.deadline = wallNow() + timeoutMs;
    this.attach(socket);
  }

  private attach(socket: Duplex): void {
    this.socket = socket;
    socket.on("data", this.onData);
    socket.on("end", this.onGone);
    socket.on("close", this.onGone);
  }

  detach(): void {
    this.socket.off("data", this.onData);
    this.socket.off("end", this.onGone);
    this.socket.off("close", this.onGone);
  }

  /**
   * Hands the socket to TLS; resolves once the handshake is done. After an SSLRequest answered
   * 'S', or `direct`ly (the client began with its TLS handshake, what is buffered its start; the
   * ALPN protocol "postgresql" offered).
   */
  async upgrade(secureContext: tlsTypes.SecureContext, direct = false): Promise<tlsTypes.TLSSocket> {
    this.detach();
    const early = this.frames.rest();
    // Sent before the client read the server's answer: refused, as Postgres (and Neon's proxy)
    // refuse it, not read as if it came through TLS (CVE-2021-23214).
    if (early.length && !direct) throw new ProtocolError("received unencrypted data after SSL request");
    const secure = new (tls().TLSSocket)(direct ? withFirst(early, this.socket) : this.socket, {
      isServer: true,
      secureContext,
      ...(direct ? { ALPNProtocols: [POSTGRES_ALPN] } : {}),
    });
    secure.on("error", () => {}); // handled through 'close'
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ClientGone()), Math.max(0, this.deadline - wallNow()));
      secure.once("secure", () => {
        clearTimeout(timer);
        resolve();
      });
      secure.once("close", () => {
        clearTimeout(timer);
        reject(new ClientGone());
      });
    });
    this.attach(secure);
    return secure;
  }

  /**
   * The next message `read` finds. Every wait shares one deadline, started with the inbox: the
   * whole start-up and authentication must fit in it (as Postgres' authentication_timeout).
   */
  async take<T>(read: (frames: Frames) => T | undefined): Promise<T> {
    for (;;) {
      const value = read(this.frames);
      if (value !== undefined) return value;
      if (this.gone) throw new ClientGone();
      const left = this.deadline - wallNow();
      if (left <= 0) throw new ClientGone();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.notify = undefined;
          reject(new ClientGone());
        }, left);
        this.notify = () => {
          clearTimeout(timer);
          this.notify = undefined;
          resolve();
        };
      });
    }
  }

  /** The next password-type ('p') message's body. */
  async password(): Promise<Buffer> {
    const message = await this.take((f) => f.typed());
    if (message.type !== "p")
      throw new ProtocolError(`expected password response, got message type ${message.raw[0]}`);
    return message.body;
  }
}

/**
 * The socket, its stream beginning with `first` (bytes read from it already): TLS reads a socket's
 * own handle, past what was read from it, so a handshake whose start was read goes through this.
 */
function withFirst(first: Buffer, socket: Duplex): Duplex {
  const stream = new Duplex({
    read: () => {
      socket.resume();
    },
    write: (chunk: Buffer, _encoding, done) => {
      socket.write(chunk, (err) => done(err ?? null));
    },
    final: (done) => {
      socket.end();
      done();
    },
    destroy: (err, done) => {
      socket.destroy();
      done(err);
    },
  });
  stream.push(first);
  socket.on("data", (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.on("end", () => stream.push(null));
  socket.on("close", () => stream.destroy());
  socket.on("error", () => {});
  return stream;
}
