import path from "node:path";
import { Api } from "/work/main/bench/lib/http.js";
import { randomKey, rssMb, sleep, spawnEmulator, tempDir } from "/work/main/bench/lib/proc.js";
import { BASE, createProject } from "/work/main/bench/lib/scenarios.js";

const dir = tempDir("idle-");
const key = randomKey();
const child = await spawnEmulator({
  db: path.join(dir, "q.db"),
  key,
  nodeArgs: (process.env.NODE_ARGS ?? "").split(" ").filter(Boolean),
});
const api = new Api(child.url, key);
const p = await createProject(api, 9, true);
const scratch = await createProject(api, 2, true);
for (let i = 0; i < 200; i++) {
  await api.expect(200, "GET", `${BASE}/projects/${p.projectId}/endpoints`);
  await api.expect(200, "GET", `${BASE}/api_keys`);
  await api.expect(200, "GET", `${BASE}/projects/${p.projectId}/operations?limit=50`);
}
for (let i = 0; i < 50; i++)
  await api.expect(201, "POST", `${BASE}/projects/${scratch.projectId}/endpoints`, {
    endpoint: { branch_id: scratch.branchIds[i % 3], type: "read_only" },
  });
const out: string[] = [];
for (const t of [2, 5, 10, 20]) {
  await sleep((t - (out.length ? [2, 5, 10, 20][out.length - 1] : 0)) * 1000);
  out.push(`${t}s ${rssMb(child.pid).toFixed(1)}`);
}
console.log(process.env.NODE_ARGS ?? "", out.join("  "));
api.close();
await child.stop();
