// The ceiling every emulator figure is compared with: a bare Hono app on @hono/node-server
// answering GET /json with a fixed ~1 KB JSON document (serialised per request, as the
// emulator serialises its responses). Started as its own process by bench/run.ts.
// With BASELINE_PLAIN=1 it is a plain node:http server instead (no Hono loaded): the floor
// for the start-up time, i.e. what starting `node` itself costs on this machine.
const item = (i) => ({
  id: `ep-bench-${String(i).padStart(6, "0")}`,
  type: "read_write",
  current_state: "active",
  region_id: "aws-us-east-2",
  autoscaling_limit_min_cu: 0.25,
  autoscaling_limit_max_cu: 1,
  created_at: "2025-01-01T00:00:00Z",
});
const PAYLOAD = { endpoints: [1, 2, 3, 4, 5].map(item) };
const port = Number(process.env.PORT ?? 0);
const ready = (info) =>
  process.stdout.write(`${JSON.stringify({ msg: "baseline listening", port: info.port })}\n`);

let server;
if (process.env.BASELINE_PLAIN === "1") {
  const http = await import("node:http");
  server = http.createServer((req, res) => {
    const body = JSON.stringify(req.url === "/json" ? PAYLOAD : { status: "ok" });
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
  server.listen(port, "127.0.0.1", () => ready(server.address()));
} else {
  const [{ serve }, { Hono }] = await Promise.all([import("@hono/node-server"), import("hono")]);
  const app = new Hono();
  app.get("/json", (c) => c.json(PAYLOAD));
  app.get("/_emulator/health", (c) => c.json({ status: "ok" }));
  server = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }, ready);
}
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections?.();
});
