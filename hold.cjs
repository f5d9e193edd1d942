const pg = require("pg");
(async () => { const cs = []; for (let i = 0; i < 15; i++) { const c = new pg.Client(process.argv[2]); await c.connect(); cs.push(c); } console.log("holding 15 direct"); await new Promise((r) => setTimeout(r, 15000)); await Promise.all(cs.map((c) => c.end())); })();
