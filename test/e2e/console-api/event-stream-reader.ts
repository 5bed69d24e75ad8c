import { type IncomingMessage, request } from "node:http";

/** One Server-Sent Event as the console's stream sends it. */
export interface StreamEvent {
  readonly event: string;
  readonly data: unknown;
}

/** An open `GET /console/api/events`, collecting every event; `next` waits for one that passes `test`. */
export interface EventStreamReader {
  readonly response: IncomingMessage;
  readonly events: StreamEvent[];
  next(test: (event: StreamEvent) => boolean, timeoutMs?: number): Promise<StreamEvent>;
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

/** Opens the console's live stream on 127.0.0.1:`port`. */
export function openEventStream(port: number): Promise<EventStreamReader> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/console/api/events" }, (response) => {
      const events: StreamEvent[] = [];
      const waiters: (() => void)[] = [];
      let buffer = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        buffer += chunk;
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) });
          end = buffer.indexOf("\n\n");
        }
        for (const wake of waiters.splice(0)) wake();
      });
      const ended = new Promise<void>((done) => response.on("close", done));
      let seen = 0;
      const next = (test: (event: StreamEvent) => boolean, timeoutMs = 10_000) =>
        new Promise<StreamEvent>((found, fail) => {
          const timer = setTimeout(() => fail(new Error(`no matching event in ${timeoutMs} ms`)), timeoutMs);
          const look = () => {
            while (seen < events.length) {
              const event = events[seen++]!;
              if (test(event)) {
                clearTimeout(timer);
                return found(event);
              }
            }
            waiters.push(look);
          };
          look();
        });
      resolve({ response, events, next, ended, close: () => req.destroy() });
    });
    req.on("error", reject);
    req.end();
  });
}
