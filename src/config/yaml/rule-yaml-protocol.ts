import type { DescriptorDocument } from "../rule-document.js";

/**
 * What {@link RuleYamlParser} asks its worker: parse these files, in this order, refusing more than
 * `maxDescriptors` descriptors in all (`parse`); then, after each reply but the last, `next` for the
 * following one.
 */
export type ParseRequest =
  | {
      readonly kind: "parse";
      readonly id: number;
      readonly files: readonly { readonly name: string; readonly content: string }[];
      readonly maxDescriptors: number;
    }
  | { readonly kind: "next"; readonly id: number };

/**
 * The worker's answers to one request, in order: for each document its header, then its top-level
 * descriptors in chunks, then `done` — or `error` at the first file that does not parse. One reply per
 * `next`: a message is deserialised on the main thread in one go, and Node delivers every queued message in
 * one event-loop turn, so the replies must be small and come one at a time.
 */
export type ParseReply =
  | { readonly id: number; readonly kind: "document"; readonly name: string; readonly domain: string }
  | { readonly id: number; readonly kind: "descriptors"; readonly descriptors: DescriptorDocument[] }
  | { readonly id: number; readonly kind: "done" }
  | {
      readonly id: number;
      readonly kind: "error";
      /** Set for a ConfigError (file name and reason), else only `message`. */
      readonly source: string | undefined;
      readonly reason: string;
    };
