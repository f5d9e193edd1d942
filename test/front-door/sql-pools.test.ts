import net from "node:net";
import { describe, expect, it } from "vitest";
import { EgressMeter } from "../../src/front-door/egress.js";
import type { DoorServices } from "../../src/front-door/session.js";
import { SqlOverHttp } from "../../src/front-door/sql-over-http.js";

/** A loopback port nothing listens on: every connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("SQL over HTTP's pools of server sessions", () => {
  it("keeps no pool for a connection string whose sessions never opened", async () => {
    const port = await closedPort();
    const services: DoorServices = {
      domain: "localtest.me",
      login: () => ({
        found: true,
        projectId: "p",
        branchId: "b",
        disabled: false,
        password: "pw",
        verifier: null,
        maxConnections: 112,
        allows: () => true,
        publicBlocked: false,
      }),
      serverRole: async () => undefined,
      ready: async () => ({ host: "127.0.0.1", port }),
      connected: () => {},
      statementsRan: () => {},
      serving: () => true,
      endClientSessions: async () => {},
      egress: new EgressMeter(),
    };
    const sql = new SqlOverHttp(services);
    for (let i = 0; i < 30; i++) {
      const res = await sql.handle(
        new Request("http://localhost/sql", {
          method: "POST",
          headers: {
            "Neon-Connection-String": `postgresql://u:pw@h/db${i}?options=endpoint%3Dep-quiet-pond-a1b2c3d4`,
          },
          body: JSON.stringify({ query: "SELECT 1" }),
        }),
      );
      expect(res.status).toBe(500);
      expect(((await res.json()) as { message: string }).message).toBe(
        "could not connect to postgres in compute",
      );
    }
    // One pool per database name had been kept for good, each ~1.5 KB.
    expect((sql as unknown as { pools: Map<string, unknown> }).pools.size).toBe(0);
    await sql.close();
  });
});
