// The micro-benchmarks' timing loop and output (bench/micro/*.mjs).

/** Nanoseconds per call of `fn`: 20,000 warm-up calls, then doubling batches until one takes over 0.3 s. */
export function nsPerOp(fn) {
  for (let i = 0; i < 20_000; i++) fn();
  let iterations = 50_000;
  for (;;) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn();
    const ns = Number(process.hrtime.bigint() - start);
    if (ns > 300_000_000) return ns / iterations;
    iterations *= 2;
  }
}

/** Times every case (name → function) and prints ns/op per case, or JSON with --json. */
export function printNsPerOp(cases) {
  const results = Object.entries(cases).map(([name, fn]) => ({ name, nsPerOp: nsPerOp(fn) }));
  if (process.argv.includes("--json")) console.log(JSON.stringify(results, null, 2));
  else
    for (const { name, nsPerOp: ns } of results) console.log(`${ns.toFixed(0).padStart(8)} ns/op  ${name}`);
}
