// The ceiling every emulator figure is compared with: a bare Hono app on @hono/node-server
// answering GET /json with a fixed ~1 KB JSON document (serialised per request, as the
// emulator serialises its responses). Started as its own process by bench/run.ts.
// With BASELINE_PLAIN=1 it is a plain node:http server instead (no Hono loaded): the floor
// for the start-up time, i.e. what starting `node` itself costs on this machine.
// With BASELINE_FLOORS=1 it is the data plane's floors, what any process between a client and
// a compute costs here: a plain node:http server answering POST /sql with BASELINE_SQL_BODY (the
// emulator's own answer to the bench's query) without asking any Postgres, and a TCP relay that
// pipes bytes both ways to 127.0.0.1:BASELINE_RELAY_TO (no TLS, routing or password check).
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
let relay;
if (process.env.BASELINE_FLOORS === "1") {
  const [http, net] = await Promise.all([import("node:http"), import("node:net")]);
  const sql = process.env.BASELINE_SQL_BODY ?? "{}";
  server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const body = req.url === "/sql" ? sql : JSON.stringify({ status: "ok" });
      res
        .writeHead(200, { "content-type": "application/json", "access-control-allow-origin": "*" })
        .end(body);
    });
  });
  server.listen(port, "127.0.0.1", () => ready(server.address()));
  const target = Number(process.env.BASELINE_RELAY_TO);
  relay = net.createServer((client) => {
    const upstream = net.connect(target, "127.0.0.1");
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ]) {
      from.setNoDelay(true);
      from.pipe(to);
      from.on("error", () => to.destroy());
    }
  });
  relay.listen(0, "127.0.0.1", () =>
    process.stdout.write(`${JSON.stringify({ msg: "relay listening", port: relay.address().port })}\n`),
  );
} else if (process.env.BASELINE_PLAIN === "1") {
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
  relay?.close();
  server.close(() => process.exit(0));
  server.closeAllConnections?.();
});
