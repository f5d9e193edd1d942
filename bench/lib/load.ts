import autocannon from "autocannon";
import { cpuMs, machineBusyMs } from "./proc.js";
import { median, percentile, round } from "./stats.js";

export interface LoadOptions {
  /** http://host:port */
  url: string;
  path: string;
  method?: "GET" | "POST" | "DELETE";
  /** Bearer key, when the route needs one. */
  key?: string;
  body?: unknown;
  /** Called for every request: pick a branch, an id to delete, ... */
  setupRequest?: (req: autocannon.Request) => autocannon.Request;
  connections: number;
  /** Seconds; ignored when `amount` is set. */
  duration?: number;
  amount?: number;
  /** Server pid: its CPU use during the run is reported. */
  pid?: number;
}

export interface RunResult {
  /** 2xx responses per second of the run. */
  rps: number;
  /** Latency of 2xx responses, milliseconds (measured per request, sub-millisecond resolution). */
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  statusCodes: Record<string, number>;
  /** Server CPU time / wall time during the run (1 = one core busy). */
  serverCpu?: number;
  /** Server CPU microseconds per 2xx response: insensitive to other load on the machine. */
  cpuUsPerReq?: number;
  /** Bytes (headers and body) per 2xx response. */
  bytesPerResponse: number;
  /** CPU (cores) used by the load generator, i.e. this process. */
  benchCpu: number;
  /** CPU (cores) used by everything else on the machine during the run: noise. */
  otherCpu: number;
}

/** One autocannon run; latency percentiles come from every 2xx response, not autocannon's 1 ms histogram. */
export function runLoad(o: LoadOptions): Promise<RunResult> {
  const headers: Record<string, string> = {};
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  if (o.body !== undefined || o.method === "POST") headers["content-type"] = "application/json";
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const cpu0 = o.pid ? cpuMs(o.pid) : 0;
  const busy0 = machineBusyMs();
  const self0 = process.cpuUsage();
  let t0 = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: o.url,
        connections: o.connections,
        duration: o.duration ?? 5,
        ...(o.amount ? { amount: o.amount } : {}),
        timeout: 30,
        headers,
        requests: [
          {
            method: o.method ?? "GET",
            path: o.path,
            ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
            ...(o.setupRequest ? { setupRequest: o.setupRequest } : {}),
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        const seconds = (performance.now() - t0) / 1000;
        const ok = latencies.length;
        const serverMs = o.pid ? cpuMs(o.pid) - cpu0 : 0;
        const selfUsage = process.cpuUsage(self0);
        const selfMs = (selfUsage.user + selfUsage.system) / 1000;
        const otherMs = Math.max(0, machineBusyMs() - busy0 - selfMs - serverMs);
        const serverCpu = o.pid ? serverMs / 1000 / seconds : undefined;
        resolve({
          rps: round(ok / seconds, 1),
          p50: round(percentile(latencies, 50), 3),
          p99: round(percentile(latencies, 99), 3),
          ok,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          seconds: round(seconds, 2),
          statusCodes,
          ...(serverCpu !== undefined
            ? { serverCpu: round(serverCpu, 2), cpuUsPerReq: round((serverMs * 1000) / Math.max(1, ok), 0) }
            : {}),
          bytesPerResponse: Math.round(result.throughput.total / Math.max(1, ok)),
          benchCpu: round(selfMs / 1000 / seconds, 2),
          otherCpu: round(otherMs / 1000 / seconds, 2),
        });
      },
    );
    instance.on("start", () => {
      t0 = performance.now();
    });
    instance.on("response", (_client, status, _bytes, ms) => {
      statusCodes[status] = (statusCodes[status] ?? 0) + 1;
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
}

export interface SeriesResult {
  connections: number;
  /** Medians over the runs. */
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Median server CPU microseconds per 2xx response. */
  cpuUsPerReq?: number;
  /** Highest CPU use by other processes during any run (cores). */
  maxOtherCpu: number;
  bytesPerResponse: number;
  runs: RunResult[];
}

/** `runs` runs at one connection count, each preceded by `between` (e.g. cleanup); medians reported. */
export async function runSeries(
  o: LoadOptions,
  runs: number,
  between?: () => Promise<void>,
): Promise<SeriesResult> {
  const results: RunResult[] = [];
  for (let i = 0; i < runs; i++) {
    if (between) await between();
    results.push(await runLoad(o));
  }
  return {
    connections: o.connections,
    rps: round(median(results.map((r) => r.rps)), 1),
    p50: round(median(results.map((r) => r.p50)), 3),
    p99: round(median(results.map((r) => r.p99)), 3),
    non2xx: results.reduce((n, r) => n + r.non2xx, 0),
    errors: results.reduce((n, r) => n + r.errors, 0),
    ...(results[0]?.cpuUsPerReq !== undefined
      ? { cpuUsPerReq: round(median(results.map((r) => r.cpuUsPerReq as number)), 0) }
      : {}),
    maxOtherCpu: Math.max(...results.map((r) => r.otherCpu)),
    bytesPerResponse: Math.round(median(results.map((r) => r.bytesPerResponse))),
    runs: results,
  };
}
