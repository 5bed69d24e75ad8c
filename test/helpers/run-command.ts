import { spawn } from "node:child_process";
import { distEntry } from "./daemon-process.js";

/**
 * Runs a built `dist/cmd/<name>.js` to completion. Without `env` it inherits this process's environment;
 * with it, it gets only PATH and `env` (so a setting of the test runner's shell cannot leak in).
 */
export function runCommand(
  name: string,
  args: string[],
  env?: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [distEntry(name), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    ...(env === undefined ? {} : { env: { PATH: process.env.PATH ?? "", ...env } }),
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c));
  child.stderr.on("data", (c: Buffer) => (stderr += c));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}
