/**
 * The serverless-driver figures (issue: Neon's serverless driver and the pooler): `neon()` over
 * HTTP against a direct TCP query on an open connection, the driver's WebSocket tunnel against TCP
 * through the front door, and 1,000 clients of the transaction pooler against 10 direct clients,
 * all on one 0.25 CU compute. Runs of each pair are interleaved; figures are medians of the runs.
 */
import { neon, neonConfig, Client as WsClient } from "@neondatabase/serverless";
import type pg from "pg";
import ws from "ws";
import { pgRunner, QUERY, type QueryRun, type Runner, runnerLoad } from "./compute.js";
import { median, round } from "./stats.js";

export interface Pair {
  clients: number;
  /** The figure measured (HTTP, WebSocket, pooled). */
  subject: Summary;
  /** Its baseline (direct TCP, TCP through the door). */
  baseline: Summary;
  baselineClients: number;
}

export interface Summary {
  qps: number;
  p50: number;
  p99: number;
  emulatorCpuUsPerQuery: number;
  runs: QueryRun[];
}

export interface ServerlessResults {
  /** neon() over HTTP vs direct TCP, one client (latency) and ten (throughput). */
  http1: Pair;
  /** neon() against a node:http server giving the emulator's answer without Postgres: the floor. */
  httpFloor1: Pair;
  http10: Pair;
  /** The serverless Client over its WebSocket tunnel vs node-postgres through the door, ten clients. */
  websocket10: Pair;
  /** 1,000 pooled clients vs 10 direct clients. */
  pooled: Pair;
}

export interface ServerlessTargets {
  uri: string;
  pooledUri: string;
  direct: pg.ClientConfig;
  httpUrl: string;
  /** The floors' server (bench/baseline.mjs): `/sql` answered with no work. */
  floorUrl: string;
  emulatorPid: number;
  runs: number;
  seconds: number;
  pooledClients: number;
  log(line: string): void;
  quiet(what: string): Promise<void>;
}

const summary = (runs: QueryRun[]): Summary => ({
  qps: round(median(runs.map((r) => r.qps)), 1),
  p50: round(median(runs.map((r) => r.p50)), 3),
  p99: round(median(runs.map((r) => r.p99)), 3),
  emulatorCpuUsPerQuery: round(median(runs.map((r) => r.emulatorCpuUsPerQuery)), 1),
  runs,
});

export async function measureServerless(t: ServerlessTargets): Promise<ServerlessResults> {
  neonConfig.webSocketConstructor = ws;
  neonConfig.wsProxy = () => `${new URL(t.httpUrl).host}/v2`;
  neonConfig.useSecureWebSocket = false;
  const failed = (err: Error) => t.log(`  a client failed: ${err.message}`);
  const pgClients = (config: pg.ClientConfig) => pgRunner(config, failed);
  // fetchEndpoint is global to the driver: set by each run's clients (runs never overlap).
  const httpTo = (url: string) => () => {
    neonConfig.fetchEndpoint = `${url}/sql`;
    const sql = neon(t.uri);
    return Promise.resolve({ query: () => sql.query(QUERY), end: async () => {} });
  };
  const http = httpTo(t.httpUrl);
  const websocket = async () => {
    const c = new WsClient(t.uri);
    c.on("error", (err) => t.log(`  a client failed: ${err.message}`));
    await c.connect();
    return { query: () => c.query(QUERY), end: () => c.end() };
  };
  const pair = async (
    name: string,
    subject: () => Promise<Runner>,
    clients: number,
    baseline: () => Promise<Runner>,
    baselineClients: number,
    baselineFirst = false,
  ): Promise<Pair> => {
    await t.quiet(name);
    if (!baselineFirst) await runnerLoad(subject, clients, 1, t.emulatorPid);
    await runnerLoad(baseline, baselineClients, 1, t.emulatorPid);
    const a: QueryRun[] = [];
    const b: QueryRun[] = [];
    if (baselineFirst) {
      // The pooler keeps its server sessions (PgBouncer's server_idle_timeout): direct clients
      // measured after it could find max_connections taken.
      for (let i = 0; i < t.runs; i++)
        b.push(await runnerLoad(baseline, baselineClients, t.seconds, t.emulatorPid));
      for (let i = 0; i < t.runs; i++) a.push(await runnerLoad(subject, clients, t.seconds, t.emulatorPid));
    } else
      for (let i = 0; i < t.runs; i++) {
        a.push(await runnerLoad(subject, clients, t.seconds, t.emulatorPid));
        b.push(await runnerLoad(baseline, baselineClients, t.seconds, t.emulatorPid));
      }
    const result = { clients, subject: summary(a), baseline: summary(b), baselineClients };
    t.log(
      `  ${name}: ${result.subject.qps} q/s (p50 ${result.subject.p50} ms) vs ${result.baseline.qps} q/s (p50 ${result.baseline.p50} ms)`,
    );
    return result;
  };
  t.log("serverless: neon() over HTTP, the WebSocket tunnel, the pooler");
  const direct = pgClients(t.direct);
  return {
    http1: await pair("HTTP @1 vs direct @1", http, 1, direct, 1),
    httpFloor1: await pair("HTTP floor @1 vs direct @1", httpTo(t.floorUrl), 1, direct, 1),
    http10: await pair("HTTP @10 vs direct @10", http, 10, direct, 10),
    websocket10: await pair(
      "WebSocket @10 vs door @10",
      websocket,
      10,
      pgClients({ connectionString: t.uri }),
      10,
    ),
    pooled: await pair(
      `pooled @${t.pooledClients} vs direct @10`,
      pgClients({ connectionString: t.pooledUri }),
      t.pooledClients,
      direct,
      10,
      true,
    ),
  };
}
