import { randomBytes, type ScryptOptions, timingSafeEqual } from "node:crypto";
import { ScryptThreads } from "./scrypt-threads.js";

/** scrypt cost parameters; `logN` is log2 of N. */
export interface ScryptParameters {
  readonly logN: number;
  readonly r: number;
  readonly p: number;
}

/** Options of {@link PasswordHasher}. */
export interface PasswordHasherOptions {
  /** Parameters of new hashes. Default ln=15, r=8, p=1 (32 MiB, tens of ms per hash). */
  readonly parameters?: ScryptParameters;
  /**
   * Hashes computed at once, each on its own low-priority thread (not libuv's pool, which file and DNS
   * work share). Default 2.
   */
  readonly concurrency?: number;
  /**
   * Hashes that may wait for a thread (USERS_PASSWORD_HASH_QUEUE); beyond, `hash` and `verify` reject at
   * once with an `OverloadedError`. Default: no bound.
   */
  readonly maxQueued?: number;
}

const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Stored hashes with costs beyond these are refused rather than computed (a tampered row). */
const MAX_LOG_N = 22;
const MAX_R = 32;
const MAX_P = 16;
const PHC = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/**
 * Password hashing with scrypt from `node:crypto`, off the event loop on low-priority threads, so that
 * on a busy core rate-limit decisions run first. Hashes are stored in
 * the self-describing PHC string format, `$scrypt$ln=15,r=8,p=1$<salt>$<hash>` (unpadded base64), so the
 * parameters can be raised later and old hashes still verify.
 */
export class PasswordHasher {
  readonly parameters: ScryptParameters;
  readonly #threads: ScryptThreads;

  constructor(options: PasswordHasherOptions = {}) {
    this.parameters = options.parameters ?? { logN: 15, r: 8, p: 1 };
    this.#threads = new ScryptThreads({ threads: options.concurrency ?? 2, maxQueued: options.maxQueued });
  }

  /**
   * A new hash of `password` with a random salt. `unbounded`: wait however full the queue is (for the
   * daemon's own work, never for a request).
   */
  async hash(password: string, options: { unbounded?: boolean } = {}): Promise<string> {
    const { logN, r, p } = this.parameters;
    const salt = randomBytes(SALT_BYTES);
    const key = await this.#derive(password, salt, this.parameters, KEY_BYTES, options.unbounded);
    return `$scrypt$ln=${logN},r=${r},p=${p}$${unpadded(salt)}$${unpadded(key)}`;
  }

  /** Whether `password` matches `stored`; false for anything that is not a hash this class wrote. */
  async verify(password: string, stored: string): Promise<boolean> {
    const parsed = parsePhc(stored);
    if (parsed === undefined) return false;
    const key = await this.#derive(password, parsed.salt, parsed.parameters, parsed.hash.length);
    return timingSafeEqual(key, parsed.hash);
  }

  /** Whether `stored` was made with weaker parameters than new hashes get. */
  needsRehash(stored: string): boolean {
    const parsed = parsePhc(stored);
    if (parsed === undefined) return true;
    const { logN, r, p } = parsed.parameters;
    return logN < this.parameters.logN || r < this.parameters.r || p < this.parameters.p;
  }

  async #derive(
    password: string,
    salt: Buffer,
    parameters: ScryptParameters,
    keyBytes = KEY_BYTES,
    unbounded = false,
  ): Promise<Buffer> {
    const N = 2 ** parameters.logN;
    const options: ScryptOptions = { N, r: parameters.r, p: parameters.p, maxmem: 256 * N * parameters.r };
    return this.#threads.derive(password.normalize("NFC"), salt, keyBytes, options, unbounded);
  }

  /** Stops the hashing threads; hashes still waiting fail. */
  close(): Promise<void> {
    return this.#threads.close();
  }
}

function unpadded(bytes: Buffer): string {
  return bytes.toString("base64").replace(/=+$/, "");
}

function parsePhc(stored: string): { parameters: ScryptParameters; salt: Buffer; hash: Buffer } | undefined {
  const match = PHC.exec(stored);
  if (match === null) return undefined;
  const [logN, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (logN < 1 || logN > MAX_LOG_N || r < 1 || r > MAX_R || p < 1 || p > MAX_P) return undefined;
  const hash = Buffer.from(match[5] ?? "", "base64");
  if (hash.length < 16) return undefined;
  return { parameters: { logN, r, p }, salt: Buffer.from(match[4] ?? "", "base64"), hash };
}
