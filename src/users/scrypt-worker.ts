/**
 * Worker-thread side of {@link ScryptThreads}: computes scrypt keys one at a time, synchronously, on a
 * thread that first lowers its own scheduling priority, so that on a busy core the event loop (rate-limit
 * decisions) runs first and hashing takes the time left over.
 */
import { scryptSync } from "node:crypto";
import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import type { ScryptReply, ScryptRequest } from "./scrypt-protocol.js";

/** The lowest priority (highest nice value). */
const LOWEST_PRIORITY = 19;

const port = parentPort;
if (port === null) throw new Error("scrypt-worker.js must run in a worker thread");

// On Linux a nice value belongs to the calling thread, so this lowers only this worker's. Elsewhere it
// would lower the whole process, so it is not done there.
if (process.platform === "linux") {
  try {
    setPriority(LOWEST_PRIORITY);
  } catch {
    // Not allowed here (a seccomp profile, say): hashing still works, at normal priority.
  }
}

port.on("message", (request: ScryptRequest) => {
  let reply: ScryptReply;
  try {
    const key = scryptSync(request.password, request.salt, request.keyBytes, request.options);
    reply = { id: request.id, key };
  } catch (error) {
    reply = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
