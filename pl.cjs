const pg = require("pg");
const uri = process.argv[2];
(async () => {
  const cs = [];
  for (let i = 0; i < 1000; i += 100) cs.push(...(await Promise.all(Array.from({ length: 100 }, async (_, j) => { const c = new pg.Client(uri); c.on("error", (e) => console.log("client", i + j, "error", e.message)); await c.connect(); return c; }))));
  console.log("connected");
  let n = 0; const end = Date.now() + 5000;
  await Promise.all(cs.map(async (c) => { while (Date.now() < end) { await c.query("SELECT 1"); n++; } }));
  console.log(n / 5, "q/s");
  await Promise.all(cs.map((c) => c.end()));
})().catch((e) => console.log("FAIL", e.message));
