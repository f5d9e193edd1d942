/**
 * The few Postgres wire messages the front door reads and writes itself, before it relays a
 * connection: the start-up phase (SSLRequest, StartupMessage, CancelRequest, password messages)
 * and the backend's authentication replies. Everything after authentication is relayed as bytes.
 * Toward the compute it writes the start-up message as the client sent it (minus the routing
 * options) and its own SCRAM messages.
 */

export const SSL_REQUEST = 80877103;
export const GSSENC_REQUEST = 80877104;
export const CANCEL_REQUEST = 80877102;
export const PROTOCOL_3 = 196608;

/** Postgres' own limit on a start-up packet; the front door applies it to every pre-authentication message. */
export const MAX_STARTUP_MESSAGE = 10_000;

/** Postgres' text (FATAL 57P01) for a session a fast shutdown or pg_terminate_backend ends. */
export const TERMINATED_TEXT = "terminating connection due to administrator command";

/**
 * Accumulates bytes and cuts them into messages: untyped (int32 length first, as the start-up
 * packet is) or typed (a type byte, then the length). Throws on a length out of bounds.
 */
export class Frames {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
  }

  /** What is buffered and not yet taken as a message. */
  rest(): Buffer {
    const rest = this.buffer;
    this.buffer = Buffer.alloc(0);
    return rest;
  }

  /** The first byte buffered, not taken; undefined until one came. */
  first(): number | undefined {
    return this.buffer[0];
  }

  /** The next untyped message's body (after its length), or undefined until it is complete. */
  untyped(max = MAX_STARTUP_MESSAGE): Buffer | undefined {
    if (this.buffer.length < 4) return undefined;
    const length = this.buffer.readInt32BE(0);
    if (length < 8 || length > max) throw new ProtocolError(`invalid length of startup packet`);
    if (this.buffer.length < length) return undefined;
    const body = this.buffer.subarray(4, length);
    this.buffer = this.buffer.subarray(length);
    return body;
  }

  /** The next typed message, or undefined until it is complete. */
  typed(max = MAX_STARTUP_MESSAGE): { type: string; body: Buffer; raw: Buffer } | undefined {
    if (this.buffer.length < 5) return undefined;
    const length = this.buffer.readInt32BE(1);
    if (length < 4 || length > max) throw new ProtocolError(`invalid message length`);
    if (this.buffer.length < length + 1) return undefined;
    const raw = this.buffer.subarray(0, length + 1);
    this.buffer = this.buffer.subarray(length + 1);
    return { type: String.fromCharCode(raw[0] ?? 0), body: raw.subarray(5), raw };
  }
}

/** A client broke the protocol: answered with 08P01 and the connection closes. */
export class ProtocolError extends Error {}

/** A failure answered to the client as an ErrorResponse, after which the connection closes. */
export class DoorError extends Error {
  constructor(readonly fields: PgErrorFields) {
    super(fields.message);
  }
}

/** The parameters of a StartupMessage body (after the protocol version). */
export function startupParameters(body: Buffer): Record<string, string> {
  const params: Record<string, string> = {};
  let at = 4;
  while (at < body.length) {
    const keyEnd = body.indexOf(0, at);
    if (keyEnd < 0)
      throw new ProtocolError("invalid startup packet layout: expected terminator as last byte");
    if (keyEnd === at) break;
    const valueEnd = body.indexOf(0, keyEnd + 1);
    if (valueEnd < 0)
      throw new ProtocolError("invalid startup packet layout: expected terminator as last byte");
    params[body.toString("utf8", at, keyEnd)] = body.toString("utf8", keyEnd + 1, valueEnd);
    at = valueEnd + 1;
  }
  return params;
}

/** A null-terminated string at `at`, and where the next field starts. */
export function cstring(body: Buffer, at: number): [string, number] {
  const end = body.indexOf(0, at);
  if (end < 0) throw new ProtocolError("invalid message format");
  return [body.toString("utf8", at, end), end + 1];
}

/** A typed message: the type (a letter or its code), the length, then `parts` one after the other. */
export function message(type: string | number, ...parts: Buffer[]): Buffer {
  const head = Buffer.alloc(5);
  head[0] = typeof type === "number" ? type : type.charCodeAt(0);
  head.writeInt32BE(
    parts.reduce((n, p) => n + p.length, 4),
    1,
  );
  return Buffer.concat([head, ...parts]);
}

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}

function auth(code: number, extra: Buffer = Buffer.alloc(0)): Buffer {
  return message("R", Buffer.concat([int32(code), extra]));
}

/** NegotiateProtocolVersion: the newest minor version of protocol 3 the server speaks, and the protocol options (_pq_.*) it does not. */
export const negotiateProtocolVersion = (minor: number, options: readonly string[]): Buffer =>
  message("v", int32(minor), int32(options.length), ...options.map((name) => Buffer.from(`${name}\0`)));

export const authenticationOk = (): Buffer => auth(0);
export const authenticationCleartextPassword = (): Buffer => auth(3);
export const authenticationSasl = (mechanisms: readonly string[]): Buffer =>
  auth(10, Buffer.from(`${mechanisms.join("\0")}\0\0`));
export const authenticationSaslContinue = (data: string): Buffer => auth(11, Buffer.from(data));
export const authenticationSaslFinal = (data: string): Buffer => auth(12, Buffer.from(data));

export interface PgErrorFields {
  severity?: "ERROR" | "FATAL";
  code: string;
  message: string;
  detail?: string;
  hint?: string;
}

/** An ErrorResponse (severity, SQLSTATE, message, and detail/hint when given). */
export function errorResponse(e: PgErrorFields): Buffer {
  const severity = e.severity ?? "ERROR";
  const fields: [string, string | undefined][] = [
    ["S", severity],
    ["V", severity],
    ["C", e.code],
    ["M", e.message],
    ["D", e.detail],
    ["H", e.hint],
  ];
  const parts = fields.filter((f): f is [string, string] => f[1] !== undefined).map(([k, v]) => `${k}${v}\0`);
  return message("E", Buffer.from(`${parts.join("")}\0`));
}

/** The fields of an ErrorResponse or NoticeResponse body, by field letter. */
export function errorFields(body: Buffer): Record<string, string> {
  const fields: Record<string, string> = {};
  let at = 0;
  while (at < body.length && body[at] !== 0) {
    const key = String.fromCharCode(body[at] ?? 0);
    const [value, next] = cstring(body, at + 1);
    fields[key] = value;
    at = next;
  }
  return fields;
}

/** A StartupMessage (protocol 3.0) carrying `params` as given. */
export function startupMessage(params: Record<string, string>): Buffer {
  const pairs = Object.entries(params).map(([k, v]) => `${k}\0${v}\0`);
  const body = Buffer.concat([int32(PROTOCOL_3), Buffer.from(`${pairs.join("")}\0`)]);
  return Buffer.concat([int32(body.length + 4), body]);
}

/** A simple-protocol Query. */
export const query = (sql: string): Buffer => message("Q", Buffer.from(`${sql}\0`));
export const terminate = (): Buffer => message("X");
export const readyForQuery = (status = "I"): Buffer => message("Z", Buffer.from(status));
export const backendKeyData = (processAndSecret: Buffer): Buffer => message("K", processAndSecret);
export const parameterStatus = (name: string, value: string): Buffer =>
  message("S", Buffer.from(`${name}\0${value}\0`));

/** SASLInitialResponse: the mechanism and the client-first message. */
export function saslInitialResponse(mechanism: string, data: string): Buffer {
  const payload = Buffer.from(data);
  return message("p", Buffer.concat([Buffer.from(`${mechanism}\0`), int32(payload.length), payload]));
}

/** SASLResponse: the client-final message. */
export function saslResponse(data: string): Buffer {
  return message("p", Buffer.from(data));
}
