import { createServer, type Server, type Socket } from "node:net";

const HTTP2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** A connection that sends nothing for this long is closed. */
const FIRST_BYTES_TIMEOUT_MS = 30_000;

/**
 * A TCP (or unix socket) server that serves cleartext HTTP/2 and HTTP/1.1 on one port: it reads until the
 * first bytes either are the HTTP/2 connection preface or cannot be, then hands the socket to the matching
 * server. (`http2.createServer({ allowHTTP1 })` only does this with TLS, via ALPN.)
 */
export function createProtocolMux(
  onHttp2: (socket: Socket) => void,
  onHttp1: (socket: Socket) => void,
): Server {
  return createServer((socket) => {
    socket.setNoDelay(true);
    let seen: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), FIRST_BYTES_TIMEOUT_MS);
    const onError = () => socket.destroy();
    const detach = () => {
      clearTimeout(timer);
      socket.removeListener("data", onData);
      socket.removeListener("error", onError);
    };
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const compared = Math.min(seen.length, HTTP2_PREFACE.length);
      if (!seen.subarray(0, compared).equals(HTTP2_PREFACE.subarray(0, compared))) {
        detach();
        // Node's HTTP/1 parser reads the native handle directly and would never see bytes put back with
        // unshift(), so the peeked bytes go through the server's own 'data' handler instead.
        onHttp1(socket);
        socket.emit("data", seen);
      } else if (compared === HTTP2_PREFACE.length) {
        detach();
        // An Http2Session drains whatever is buffered in the stream before taking over the handle.
        socket.pause();
        socket.unshift(seen);
        onHttp2(socket);
      }
    };
    socket.on("data", onData);
    socket.on("error", onError);
    socket.on("close", () => clearTimeout(timer));
  });
}
