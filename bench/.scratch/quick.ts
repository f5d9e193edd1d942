// Quick loop: GET endpoints @10, POST read_only @10, GET api_keys @10, idle RSS, advance.
import path from "node:path";
import { Api } from "/work/main/bench/lib/http.js";
import { runLoad } from "/work/main/bench/lib/load.js";
import { randomKey, rssMb, sleep, spawnEmulator, tempDir } from "/work/main/bench/lib/proc.js";
import {
  BASE,
  createProject,
  deleteEndpoints,
  postReadOnlyLoad,
  prepareAdvance,
} from "/work/main/bench/lib/scenarios.js";

const which = process.argv.slice(2);
const want = (s: string) => which.length === 0 || which.includes(s);
const dir = tempDir("quick-");
const key = randomKey();
const D = Number(process.env.D ?? 5);
const child = await spawnEmulator({
  db: path.join(dir, "q.db"),
  key,
  nodeArgs: (process.env.NODE_ARGS ?? "").split(" ").filter(Boolean),
});
const api = new Api(child.url, key);
const p = await createProject(api, 9, true);
for (let i = 0; i < 300; i++) {
  await api.expect(200, "GET", `${BASE}/projects/${p.projectId}/endpoints`);
  await api.expect(200, "GET", `${BASE}/api_keys`);
}
await sleep(1500);
console.log("idle RSS", rssMb(child.pid).toFixed(1), "MB");
const show = (n: string, r: any) =>
  console.log(
    n,
    Math.round(r.rps),
    "req/s p50",
    r.p50,
    "p99",
    r.p99,
    "cpu us/req",
    Math.round(r.cpuUsPerReq),
    "non2xx",
    r.non2xx,
    "other",
    r.otherCpu?.toFixed(2),
  );
if (want("get")) {
  await runLoad({
    url: child.url,
    path: `${BASE}/projects/${p.projectId}/endpoints`,
    key,
    pid: child.pid,
    connections: 10,
    duration: 2,
  });
  show(
    "GET endpoints",
    await runLoad({
      url: child.url,
      path: `${BASE}/projects/${p.projectId}/endpoints`,
      key,
      pid: child.pid,
      connections: 10,
      duration: D,
    }),
  );
}
if (want("keys"))
  show(
    "GET api_keys",
    await runLoad({
      url: child.url,
      path: `${BASE}/api_keys`,
      key,
      pid: child.pid,
      connections: 10,
      duration: D,
    }),
  );
if (want("post")) {
  const o = postReadOnlyLoad({ url: child.url, key, pid: child.pid }, p.projectId, p.branchIds);
  await runLoad({ ...o, connections: 10, duration: 2 });
  await deleteEndpoints(api, p.projectId, (e) => e.type === "read_only");
  show("POST endpoints", await runLoad({ ...o, connections: 10, duration: D }));
}
api.close();
await child.stop();
if (want("advance")) {
  const c2 = await spawnEmulator({ db: path.join(dir, "adv.db"), key, clock: "manual" });
  const a2 = new Api(c2.url, key);
  const adv = await prepareAdvance(a2);
  const r = await adv.run();
  console.log("advance 7d", Math.round(r.ms), "ms", JSON.stringify(r.operations));
  a2.close();
  await c2.stop();
}
