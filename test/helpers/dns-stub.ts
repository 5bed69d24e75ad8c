import { createSocket, type RemoteInfo } from "node:dgram";
import { promises as dns } from "node:dns";

/** One SRV answer the stub gives. */
export interface StubSrvRecord {
  readonly target: string;
  readonly port: number;
  readonly priority?: number;
  readonly weight?: number;
}

/** A tiny authoritative DNS server on UDP 127.0.0.1 answering SRV questions from a table. */
export interface DnsStub {
  readonly port: number;
  /** Replaces the SRV answers for `name` (an empty list: the name exists with no records). */
  setSrv(name: string, records: readonly StubSrvRecord[]): void;
  /** SRV questions answered so far, by name. */
  queries(name: string): number;
  /** A resolver that asks only this stub. */
  resolver(): dns.Resolver;
  close(): Promise<void>;
}

const TYPE_SRV = 33;
const CLASS_IN = 1;

/**
 * Starts the stub. Names not in the table get NXDOMAIN; other question types get an empty answer. Enough of
 * RFC 1035 for c-ares (Node's resolver): one question per query, answers with a compression pointer to it.
 */
export async function startDnsStub(): Promise<DnsStub> {
  const table = new Map<string, readonly StubSrvRecord[]>();
  const counts = new Map<string, number>();
  const socket = createSocket("udp4");
  socket.on("message", (query: Buffer, from: RemoteInfo) => {
    const question = parseQuestion(query);
    if (question === undefined) return;
    const records = question.type === TYPE_SRV ? table.get(question.name) : undefined;
    if (question.type === TYPE_SRV) counts.set(question.name, (counts.get(question.name) ?? 0) + 1);
    const known = table.has(question.name);
    socket.send(answer(query, question.end, known, records ?? []), from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  const port = socket.address().port;
  return {
    port,
    setSrv: (name, records) => table.set(name.toLowerCase(), records),
    queries: (name) => counts.get(name.toLowerCase()) ?? 0,
    resolver: () => {
      const resolver = new dns.Resolver({ timeout: 1000, tries: 1 });
      resolver.setServers([`127.0.0.1:${port}`]);
      return resolver;
    },
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

function parseQuestion(query: Buffer): { name: string; type: number; end: number } | undefined {
  if (query.length < 12 || query.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let offset = 12;
  while (offset < query.length && query[offset] !== 0) {
    const length = query[offset]!;
    labels.push(query.toString("latin1", offset + 1, offset + 1 + length));
    offset += 1 + length;
  }
  offset += 1;
  if (offset + 4 > query.length) return undefined;
  return { name: labels.join(".").toLowerCase(), type: query.readUInt16BE(offset), end: offset + 4 };
}

function answer(
  query: Buffer,
  questionEnd: number,
  known: boolean,
  records: readonly StubSrvRecord[],
): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  // QR, AA, RD copied; RCODE 3 (NXDOMAIN) for unknown names.
  header.writeUInt16BE(0x8400 | (query.readUInt16BE(2) & 0x0100) | (known ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const answers = records.map((record) => {
    const target = encodeName(record.target);
    const fixed = Buffer.alloc(18);
    fixed.writeUInt16BE(0xc00c, 0); // the question's name
    fixed.writeUInt16BE(TYPE_SRV, 2);
    fixed.writeUInt16BE(CLASS_IN, 4);
    fixed.writeUInt32BE(5, 6);
    fixed.writeUInt16BE(6 + target.length, 10);
    fixed.writeUInt16BE(record.priority ?? 10, 12);
    fixed.writeUInt16BE(record.weight ?? 10, 14);
    fixed.writeUInt16BE(record.port, 16);
    return Buffer.concat([fixed, target]);
  });
  return Buffer.concat([header, query.subarray(12, questionEnd), ...answers]);
}

function encodeName(name: string): Buffer {
  const parts = name.replace(/\.$/, "").split(".");
  return Buffer.concat([
    ...parts.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, "latin1")])),
    Buffer.from([0]),
  ]);
}
