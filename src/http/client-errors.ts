import type { Duplex } from "node:stream";

/**
 * Requests Node's HTTP parser refuses before any handler sees them (a method it does not know,
 * headers too large, malformed bytes) get the same JSON error body as every other answer, not
 * Node's bare `400 Bad Request`: an unknown method is 405, a request not received in time 408,
 * oversized headers 431, the rest 400.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || err.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] =
    err.code === "HPE_INVALID_METHOD"
      ? [405, "Method Not Allowed", "METHOD_NOT_ALLOWED", "this HTTP method is not allowed here"]
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "Request Timeout", "INVALID_REQUEST", "the request was not received in time"]
        : err.code === "HPE_HEADER_OVERFLOW"
          ? [431, "Request Header Fields Too Large", "INVALID_REQUEST", "request headers are too large"]
          : [400, "Bad Request", "INVALID_REQUEST", "malformed HTTP request"];
  reply(socket, status, reason, { code, message });
}

/** CONNECT (Node hands it to a `connect` listener, not to the app): no route is a proxy. */
export function refuseConnect(_request: unknown, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  reply(socket, 405, "Method Not Allowed", {
    code: "METHOD_NOT_ALLOWED",
    message: "CONNECT is not allowed: the emulator is not a proxy",
  });
}

function reply(
  socket: Duplex,
  status: number,
  reason: string,
  error: { code: string; message: string },
): void {
  const body = JSON.stringify(error);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
