// Node's process metrics on /metrics count from the process's start, as a Prometheus client's process
// collector does (Go's reads /proc/self/stat): a daemon that burned CPU before anyone scraped it reports that
// CPU in its first scrape. prom-client creates its CPU counters at zero when they are registered, so
// registering them at the first scrape lost everything before it.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import t from "tap";
import { startDaemon } from "../helpers/daemon-process.js";
import { httpRequest } from "../helpers/http-request.js";
import { parsePrometheusText, seriesValue } from "../helpers/prometheus-text.js";

const TICKS_PER_SECOND = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** The kernel's account of a process's CPU time (user + system) in seconds: /proc/<pid>/stat fields 14, 15. */
function kernelCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) in parentheses; field 3 is the first.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

t.test("the first scrape reports the CPU the daemon used before it", async (t) => {
  const dir = t.testdir({
    config: {
      "r.yaml": "domain: d\ndescriptors:\n  - key: k\n    rate_limit: { unit: hour, requests_per_unit: 9 }\n",
    },
  });
  const daemon = await startDaemon({ RUNTIME_ROOT: dir });
  t.teardown(() => daemon.stop());
  const pid = daemon.child.pid!;
  // Start-up alone costs a good fraction of a CPU-second (module loading, generated protobuf code); some
  // decisions add to it. No scrape has happened yet.
  const body = JSON.stringify({ domain: "d", descriptors: [{ entries: [{ key: "k", value: "v" }] }] });
  for (let i = 0; i < 200; i++) await httpRequest(daemon.httpPort, "/json", { method: "POST", body });

  const before = kernelCpuSeconds(pid);
  const reply = await httpRequest(daemon.debugPort, "/metrics");
  const after = kernelCpuSeconds(pid);
  t.equal(reply.status, 200);
  const families = parsePrometheusText(reply.body);
  const total = seriesValue(families, "process_cpu_seconds_total")!;
  const user = seriesValue(families, "process_cpu_user_seconds_total")!;
  const system = seriesValue(families, "process_cpu_system_seconds_total")!;
  t.ok(before > 0.1, `the kernel counted ${before} CPU-seconds before the first scrape`);
  // The kernel's figures are whole ticks, rounded down, for user and system separately.
  const slack = 2 / TICKS_PER_SECOND;
  t.ok(total >= before, `process_cpu_seconds_total ${total} ≥ ${before} used before the scrape`);
  t.ok(total <= after + slack, `process_cpu_seconds_total ${total} ≤ ${after} used after it (+ ${slack})`);
  t.equal(Math.round((user + system) * 1e6), Math.round(total * 1e6), "user + system = total");

  const again = await httpRequest(daemon.debugPort, "/metrics");
  const later = seriesValue(parsePrometheusText(again.body), "process_cpu_seconds_total")!;
  t.ok(later >= total, `the counter only grows: ${later} ≥ ${total}`);
});
