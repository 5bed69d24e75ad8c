import type { IncomingMessage, ServerResponse } from "node:http";

/** One route of an HTTP listener. Routes are tried in order; the first whose `matches` is true handles. */
export interface HttpRoute {
  matches(path: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> | void;
}

/** A route for one exact path, any method (gorilla/mux without a method matcher). */
export function exactRoute(path: string, handle: HttpRoute["handle"]): HttpRoute {
  return { matches: (candidate) => candidate === path, handle };
}
