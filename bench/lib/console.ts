import http from "node:http";
import path from "node:path";
import { Api } from "./http.js";
import { randomKey, spawnEmulator } from "./proc.js";
import { percentile, round } from "./stats.js";

/**
 * The web console's pages with 100 projects in the account: sequential GETs of each page on one
 * keep-alive connection (latency on loopback: server time plus a fraction of a millisecond),
 * against the API's list of the same 100 projects as the baseline; and what a first visit
 * transfers (the projects page, its stylesheet and script).
 */

export interface PageFigure {
  page: string;
  n: number;
  p50: number;
  p99: number;
  bytes: number;
}

export interface ConsoleResults {
  projects: number;
  pages: PageFigure[];
  baseline: PageFigure;
  firstLoadBytes: number;
}

interface Got {
  status: number;
  ms: number;
  bytes: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

function get(agent: http.Agent, url: string, headers: http.OutgoingHttpHeaders): Promise<Got> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(url, { headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - t0,
          bytes: body.length,
          headers: res.headers,
          text: body.toString("utf8"),
        });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

async function figure(
  agent: http.Agent,
  url: string,
  headers: http.OutgoingHttpHeaders,
  n: number,
  page: string,
): Promise<PageFigure> {
  for (let i = 0; i < 20; i++) await get(agent, url, headers);
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const res = await get(agent, url, headers);
    if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${res.text.slice(0, 300)}`);
    ms.push(res.ms);
    bytes = res.bytes;
  }
  return { page, n, p50: round(percentile(ms, 50), 2), p99: round(percentile(ms, 99), 2), bytes };
}

export async function measureConsole(o: {
  dir: string;
  samples: number;
  log: (s: string) => void;
  quiet: (what: string) => Promise<void>;
}): Promise<ConsoleResults> {
  const key = randomKey();
  const child = await spawnEmulator({
    db: path.join(o.dir, "console.db"),
    key,
    env: { NEON_EMULATOR_PLAN: "paid" },
  });
  const api = new Api(child.url, key);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const PROJECTS = 100;
    o.log(`console: ${PROJECTS} projects`);
    let first: { project: { id: string }; branch: { id: string } } | undefined;
    for (let i = 0; i < PROJECTS; i++) {
      const made = await api.expect<{ project: { id: string }; branch: { id: string } }>(
        201,
        "POST",
        "/api/v2/projects",
        { project: { name: `console-bench-${i}` } },
      );
      first ??= made;
    }
    if (!first) throw new Error("no project made");
    const link = await api.expect<{ url: string }>(200, "POST", "/_emulator/console/sign-in-link");
    const signIn = await get(agent, link.url, {});
    const cookie = String(signIn.headers["set-cookie"]?.[0] ?? "").split(";")[0] ?? "";
    if (signIn.status !== 303 || !cookie) throw new Error(`sign-in: ${signIn.status}`);
    const p = `/app/projects/${first.project.id}`;
    const pages = [
      "/app/projects",
      p,
      `${p}/branches/${first.branch.id}`,
      `${p}/branches/${first.branch.id}?tab=roles`,
      `${p}/sql`,
      `${p}/monitoring`,
      "/app/settings/api-keys",
      "/app/emulator",
    ];
    const out: PageFigure[] = [];
    await o.quiet("console pages");
    for (const page of pages) {
      out.push(await figure(agent, `${child.url}${page}`, { cookie }, o.samples, page));
      o.log(`  GET ${page}: p50 ${out.at(-1)?.p50} ms`);
    }
    const baseline = await figure(
      agent,
      `${child.url}/api/v2/projects?limit=100`,
      { authorization: `Bearer ${key}` },
      o.samples,
      "GET /api/v2/projects?limit=100",
    );
    const css = await get(agent, `${child.url}/app/assets/console.css`, {});
    const js = await get(agent, `${child.url}/app/assets/console.js`, {});
    const projects = out[0] as PageFigure;
    return {
      projects: PROJECTS,
      pages: out,
      baseline,
      firstLoadBytes: projects.bytes + css.bytes + js.bytes,
    };
  } finally {
    agent.destroy();
    api.close();
    await child.stop();
  }
}
