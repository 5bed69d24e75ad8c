import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyTooLargeError } from "../../errors.js";

/** Go's `http.Error`: status, `text/plain; charset=utf-8`, `nosniff`, body `<text>\n`. */
export function sendGoError(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, {
    "content-type": "text/plain; charset=utf-8",
    "x-content-type-options": "nosniff",
  });
  res.end(`${text}\n`);
}

/** Go's `http.NotFound`. */
export function sendNotFound(res: ServerResponse): void {
  sendGoError(res, 404, "404 page not found");
}

/** A JSON response with an exact `content-length`. */
export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * Reads a whole request body. Beyond `maxBytes` the rest is read and discarded (memory stays bounded and
 * the client still gets an answer rather than a reset), then the promise rejects with a
 * {@link BodyTooLargeError}.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
    });
    req.on("end", () =>
      size > maxBytes ? reject(new BodyTooLargeError(maxBytes)) : resolve(Buffer.concat(chunks, size)),
    );
    req.on("error", reject);
  });
}
