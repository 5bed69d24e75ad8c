// A private redis-server for benchmarks: free port, no persistence, stopped at the end.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds, waitForPort } from "./proc.mjs";

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Starts redis-server (pinned to `cpu` when given); resolves once it accepts connections. */
export async function startRedis(cpu) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "bench-redis-"));
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
    "--logfile",
    "",
  ];
  const child =
    cpu === undefined
      ? spawn("redis-server", args, { stdio: "ignore" })
      : spawn("taskset", ["-c", String(cpu), "redis-server", ...args], { stdio: "ignore" });
  await waitForPort(port);
  return {
    port,
    /** redis-server's pid (taskset execs it): `kill -STOP` freezes it for the outage benchmark. */
    pid: child.pid,
    cpuSeconds: () => cpuSeconds(child.pid),
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill("SIGKILL");
      }),
  };
}
