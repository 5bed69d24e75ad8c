import { createSocket } from "node:dgram";
import { pollUntil } from "./redis-process.js";

/** A statsd/DogStatsD server on a free loopback UDP port: every line of every datagram, in order. */
export interface UdpListener {
  readonly port: number;
  readonly lines: string[];
  /** Polls until `done(lines)` returns a value other than undefined, and returns it. */
  waitFor<T>(what: string, done: (lines: readonly string[]) => T | undefined, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

/** Binds the listener on 127.0.0.1 and an ephemeral port. */
export async function startUdpListener(): Promise<UdpListener> {
  const socket = createSocket("udp4");
  const lines: string[] = [];
  socket.on("message", (message) =>
    lines.push(
      ...message
        .toString("utf8")
        .split("\n")
        .filter((l) => l !== ""),
    ),
  );
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  return {
    port: socket.address().port,
    lines,
    waitFor: (what, done, timeoutMs = 10_000) => pollUntil(what, async () => done(lines), { timeoutMs }),
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
