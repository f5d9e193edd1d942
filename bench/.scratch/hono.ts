import { runLoad } from "/work/main/bench/lib/load.js";
import { spawnBaseline } from "/work/main/bench/lib/proc.js";

const c = await spawnBaseline();
await runLoad({ url: c.url, path: "/json", pid: c.pid, connections: 10, duration: 2 });
for (let i = 0; i < 2; i++) {
  const r = await runLoad({ url: c.url, path: "/json", pid: c.pid, connections: 10, duration: 5 });
  console.log("hono", Math.round(r.rps), "cpu us/req", Math.round(r.cpuUsPerReq!));
}
await c.stop();
