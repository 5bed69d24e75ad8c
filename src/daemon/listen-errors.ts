/**
 * A listener that could not open, with the setting that chose its address: `listen EADDRINUSE: address
 * already in use 0.0.0.0:6070` alone leaves a newcomer guessing which of the daemon's ports it was.
 */
export async function listeningAsSet<T>(setting: string, value: string, listen: Promise<T>): Promise<T> {
  try {
    return await listen;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = error instanceof Error ? error.message : String(error);
    const what = setting === "GRPC_UDS" ? "path" : "port";
    if (code === "EADDRINUSE") {
      throw new Error(
        `${setting} ${value} is already in use (${reason}): stop the process listening there (another ratelimitd?) or set ${setting} to a free ${what}`,
        { cause: error },
      );
    }
    if (code === "EACCES") {
      const fix =
        what === "path"
          ? `set ${setting} to a path this user may create`
          : `ports below 1024 need privileges; set ${setting} to a port this user may open`;
      throw new Error(`${setting} ${value} cannot be opened (${reason}): ${fix}`, { cause: error });
    }
    throw error;
  }
}
