import fs from "node:fs";
const uri = fs.readFileSync("/tmp/emu1/uri2", "utf8").trim();
for (let k = 0; k < 3; k++) {
  const t0 = performance.now(); const n = 100;
  for (let i = 0; i < n; i++) await (await fetch("http://127.0.0.1:4999/sql", { method: "POST", headers: { "Neon-Connection-String": uri }, body: '{"query":"select 1"}' })).text();
  console.log(((performance.now() - t0) / n).toFixed(3), "ms per request");
}
