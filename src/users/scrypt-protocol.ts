import type { ScryptOptions } from "node:crypto";

/** One key to derive, sent to a scrypt worker. */
export interface ScryptRequest {
  readonly id: number;
  readonly password: string;
  readonly salt: Uint8Array;
  readonly keyBytes: number;
  readonly options: ScryptOptions;
}

/** The derived key, or why it could not be derived. */
export type ScryptReply =
  | { readonly id: number; readonly key: Uint8Array }
  | { readonly id: number; readonly error: string };
