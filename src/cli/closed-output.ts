/**
 * Makes a closed stdout or stderr harmless, for every command: when whoever reads the output goes away
 * (`ratelimitd-admin migrations logs 4 | head`), the next write fails with EPIPE, which Node reports as an
 * `error` event that nobody handles — a crash with a stack trace. Here the rest of that stream's output is
 * dropped instead and the command carries on to its normal end and exit code: a listing ends quietly, a
 * migration run still finishes its batches, a server keeps serving. (Node ignores SIGPIPE, so the write
 * error is the only signal; a Go tool such as the reference's would be killed by the signal instead.)
 * Any other stream error is still thrown.
 */
export function dropOutputOnceClosed(
  streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr],
): void {
  for (const stream of streams) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      // The socket is destroyed by the error: later writes fail silently, without another event.
      if (error.code === "EPIPE") return;
      throw error;
    });
  }
}
