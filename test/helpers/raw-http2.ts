import { connect, type Socket } from "node:net";

/** What the server sent on a {@link RawHttp2Connection}. */
export interface RawHttp2Received {
  /** The server's SETTINGS (identifier → value), once they arrived. */
  settings: Record<number, number> | undefined;
  /** RST_STREAM error codes, in order. */
  readonly rstCodes: number[];
  /** The first GOAWAY's error code. */
  goawayCode: number | undefined;
  /** The first GOAWAY's last stream identifier and debug data. */
  goawayLastStreamId: number | undefined;
  goawayDebug: string | undefined;
}

/** An HTTP/2 client connection writing frames by hand, so that it can ignore the server's SETTINGS. */
export interface RawHttp2Connection {
  readonly received: RawHttp2Received;
  /** Resolves once the server's SETTINGS arrived (they are acknowledged at once). */
  readonly ready: Promise<void>;
  /** Resolves once the server's first GOAWAY arrived. */
  readonly goaway: Promise<void>;
  /** Resolves when the server closed the connection. */
  readonly closed: Promise<void>;
  /** Opens a POST stream to `path` with gRPC headers and no END_STREAM: a request never completed. */
  openStream(path: string): void;
  destroy(): void;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

function frame(type: number, flags: number, streamId: number, payload = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** HPACK literal without indexing, name from the static table (RFC 7541 §6.2.2); values under 127 bytes. */
function literal(index: number, value: string): Buffer {
  const name = index < 15 ? [index] : [15, index - 15];
  return Buffer.concat([Buffer.from([...name, value.length]), Buffer.from(value)]);
}

/** Connects to 127.0.0.1:`port`, sends the preface and empty SETTINGS, and parses what comes back. */
export function rawHttp2Connection(port: number): RawHttp2Connection {
  const socket: Socket = connect(port, "127.0.0.1");
  const received: RawHttp2Received = {
    settings: undefined,
    rstCodes: [],
    goawayCode: undefined,
    goawayLastStreamId: undefined,
    goawayDebug: undefined,
  };
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  let onGoaway: () => void = () => {};
  const goaway = new Promise<void>((resolve) => (onGoaway = resolve));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  let pending = Buffer.alloc(0);
  socket.on("error", () => {});
  socket.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
      const length = pending.readUIntBE(0, 3);
      const [type, flags] = [pending[3], pending[4]!];
      const payload = pending.subarray(9, 9 + length);
      pending = pending.subarray(9 + length);
      if (type === 4 && (flags & 1) === 0) {
        const settings: Record<number, number> = {};
        for (let at = 0; at + 6 <= payload.length; at += 6)
          settings[payload.readUInt16BE(at)] = payload.readUInt32BE(at + 2);
        received.settings = settings;
        socket.write(frame(4, 1, 0));
        onReady();
      } else if (type === 3) received.rstCodes.push(payload.readUInt32BE(0));
      else if (type === 7 && received.goawayCode === undefined) {
        received.goawayLastStreamId = payload.readUInt32BE(0) & 0x7fffffff;
        received.goawayCode = payload.readUInt32BE(4);
        received.goawayDebug = payload.toString("utf8", 8);
        onGoaway();
      }
    }
  });
  socket.write(Buffer.concat([PREFACE, frame(4, 0, 0)]));
  let nextStreamId = 1;
  return {
    received,
    ready,
    goaway,
    closed,
    openStream(path) {
      const block = Buffer.concat([
        Buffer.from([0x83, 0x86]), // :method POST, :scheme http
        literal(4, path),
        literal(1, "localhost"),
        literal(31, "application/grpc"),
      ]);
      socket.write(frame(1, 4, nextStreamId, block)); // HEADERS, END_HEADERS
      nextStreamId += 2;
    },
    destroy: () => socket.destroy(),
  };
}
