// Runs h2load and reads its results: requests, throughput, and latency percentiles from its request log.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * One load run. `target` is { url, body, headers, h1 }; `load` is { seconds, warmupSeconds, clients,
 * streams, rps? (per client), cpu (a taskset list), threads? (1) }. Resolves with { done, failed, rps, p50Ms, p99Ms, seconds }.
 */
export async function h2load(target, load) {
  const dir = mkdtempSync(join(tmpdir(), "h2load-"));
  const bodyFile = join(dir, "body");
  const logFile = join(dir, "log");
  writeFileSync(bodyFile, target.body);
  const args = [
    "-c",
    String(load.clients),
    "-m",
    String(target.h1 ? 1 : load.streams),
    "-t",
    String(load.threads ?? 1),
    "-D",
    `${load.seconds}`,
    "--warm-up-time",
    `${load.warmupSeconds}`,
    "-d",
    bodyFile,
    "--log-file",
    logFile,
    ...Object.entries(target.headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
    ...(target.h1 ? ["--h1"] : []),
    ...(load.rps ? ["--rps", String(load.rps)] : []),
    target.url,
  ];
  const output = await new Promise((resolve, reject) =>
    execFile(
      "taskset",
      ["-c", String(load.cpu), "h2load", ...args],
      { maxBuffer: 1 << 24 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`h2load failed: ${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout),
    ),
  );
  const latencies = readFileSync(logFile, "utf8")
    .trim()
    .split("\n")
    .map((line) => line.split("\t"))
    .filter((f) => f.length >= 3 && f[1] === "200")
    .map((f) => Number(f[2]) / 1000)
    .sort((a, b) => a - b);
  rmSync(dir, { recursive: true, force: true });
  const done = Number(/requests: \d+ total, \d+ started, (\d+) done/.exec(output)?.[1] ?? 0);
  const succeeded = Number(/(\d+) succeeded, (\d+) failed, (\d+) errored/.exec(output)?.[1] ?? 0);
  const failed = done - succeeded;
  const rps = Number(/finished in [\d.]+\w*, ([\d.]+) req\/s/.exec(output)?.[1] ?? 0);
  const pct = (p) =>
    latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? Number.NaN;
  return { done, failed, rps, p50Ms: pct(50), p99Ms: pct(99), seconds: load.seconds, output };
}
