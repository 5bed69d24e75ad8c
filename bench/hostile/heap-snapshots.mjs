// Concurrent heap snapshots on the debug port: `--concurrent` (3) GET /debug/pprof/heap at once while a
// ShouldRateLimit call is made every 20 ms on the gRPC port. Prints each snapshot's HTTP status and size,
// whether a snapshot holds the ADMIN_APP_PASSWORD the daemon was started with, the daemon's peak RSS and
// the slowest decision meanwhile (a heap snapshot stops the event loop while V8 writes it).
//
//   node bench/hostile/heap-snapshots.mjs [--checkout DIR] [--concurrent 3] [--enable]
//
// `--enable` starts the daemon with DEBUG_HEAP_SNAPSHOT_ENABLED=true (snapshots are off by default since
// that setting exists; older builds ignore it).
import { request } from "node:http";
import { connect } from "node:http2";
import { option, RLS_PATH, rssMb, sleep, startDaemon } from "./lib.mjs";

const CONCURRENT = Number(option("concurrent", 3));
const PASSWORD = "hostile-bench-admin-password-7f3c9a";
const daemon = await startDaemon({
  ADMIN_EMAIL: "admin@example.com",
  ADMIN_APP_PASSWORD: PASSWORD,
  ...(process.argv.includes("--enable") ? { DEBUG_HEAP_SNAPSHOT_ENABLED: "true" } : {}),
});

const session = connect(`http://127.0.0.1:${daemon.grpcPort}`);
const decide = () =>
  new Promise((resolve) => {
    const stream = session.request({
      ":method": "POST",
      ":path": RLS_PATH,
      "content-type": "application/grpc",
    });
    stream.resume();
    stream.on("close", resolve);
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
  });
let probing = true;
let slowestMs = 0;
let peakRss = rssMb(daemon.pid);
const probes = (async () => {
  while (probing) {
    const t0 = performance.now();
    await decide();
    slowestMs = Math.max(slowestMs, performance.now() - t0);
    peakRss = Math.max(peakRss, rssMb(daemon.pid));
    await sleep(20);
  }
})();
await sleep(200);

const snapshot = () =>
  new Promise((resolve) => {
    request({ host: "127.0.0.1", port: daemon.debugPort, path: "/debug/pprof/heap" }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode,
          bytes: body.length,
          holdsAdminPassword: body.includes(PASSWORD),
          text: res.statusCode === 200 ? undefined : body.toString().trim(),
        });
      });
    }).end();
  });
const t0 = performance.now();
const snapshots = await Promise.all(Array.from({ length: CONCURRENT }, snapshot));
const seconds = (performance.now() - t0) / 1000;
probing = false;
await probes;
console.log(
  JSON.stringify(
    {
      checkout: option("checkout", "this clone"),
      snapshots,
      secondsForAll: Number(seconds.toFixed(2)),
      slowestDecisionMs: Math.round(slowestMs),
      peakRssMb: peakRss,
    },
    null,
    2,
  ),
);
session.close();
await daemon.stop();
