/**
 * A worker thread of WORKERS > 1 (docs/workers.md), an entry point as cmd/ratelimitd.ts is: reads the
 * settings from the main thread's environment, starts a {@link DecisionThread}, and reports a failed
 * start to the main thread.
 */
import { parentPort, workerData } from "node:worker_threads";
import { loadSettings } from "../../settings/load-settings.js";
import { DecisionThread } from "./decision-thread.js";
import type { DecisionThreadData, FromWorker } from "./worker-messages.js";

const parent = parentPort;
if (parent === null) throw new Error("decision-thread-entry.js must run in a worker thread");
const data = workerData as DecisionThreadData;
const thread = new DecisionThread(loadSettings(data.env ?? process.env), data, parent);

// As in the main thread (cmd/ratelimitd.ts): a bug in one request must not take the thread down.
let reporting = false;
const report = (what: string, error: unknown) => {
  if (reporting) return;
  reporting = true;
  try {
    process.stderr.write(`worker ${data.index}: ${what}: ${(error as Error)?.stack ?? String(error)}\n`);
  } catch {
    // Nothing more can be done about a failure to log.
  } finally {
    reporting = false;
  }
};
process.on("uncaughtException", (error) => report("uncaught exception", error));
process.on("unhandledRejection", (reason) => report("unhandled rejection", reason));

thread.start().catch((error: unknown) => {
  parent.postMessage({
    type: "failed",
    message: error instanceof Error ? error.message : String(error),
  } satisfies FromWorker);
});
