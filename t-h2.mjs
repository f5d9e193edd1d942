for (let k = 0; k < 3; k++) {
  const t0 = performance.now(); const n = 200;
  for (let i = 0; i < n; i++) await (await fetch("http://127.0.0.1:4999/_emulator/health")).text();
  console.log(((performance.now() - t0) / n).toFixed(3), "ms per health request");
}
