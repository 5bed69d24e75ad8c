/**
 * Worker-thread side of {@link RuleYamlParser}: parses rule files with {@link parseRuleYaml}, so that a
 * large file (tens of megabytes take seconds) never stalls the daemon's event loop.
 */
import { parentPort } from "node:worker_threads";
import { ConfigError, messageOf } from "../../errors.js";
import { tooManyDescriptors } from "../build-rule-set.js";
import type { DescriptorDocument } from "../rule-document.js";
import { parseRuleYaml } from "./parse-rule-yaml.js";
import type { ParseReply, ParseRequest } from "./rule-yaml-protocol.js";

/** Descriptors (nested ones included) per message: about a millisecond to deserialise. */
const DESCRIPTORS_PER_MESSAGE = 500;

const port = parentPort;
if (port === null) throw new Error("rule-yaml-worker.js must run in a worker thread");

/** Replies not yet sent, per request: each `next` sends one. */
const queued = new Map<number, ParseReply[]>();

port.on("message", (request: ParseRequest) => {
  if (request.kind === "parse") queued.set(request.id, repliesFor(request));
  const replies = queued.get(request.id);
  const reply = replies?.shift();
  if (reply === undefined) return;
  if (replies!.length === 0) queued.delete(request.id);
  port.postMessage(reply);
});

function repliesFor({ id, files, maxDescriptors }: Extract<ParseRequest, { kind: "parse" }>): ParseReply[] {
  const replies: ParseReply[] = [];
  let descriptors = 0;
  try {
    for (const file of files) {
      const document = parseRuleYaml(file.name, file.content);
      // Counted here, so that a rule set too large is refused before any of it reaches the main thread.
      for (const descriptor of document.descriptors) descriptors += countDescriptors(descriptor);
      if (descriptors > maxDescriptors) throw tooManyDescriptors(file.name, maxDescriptors);
      replies.push({ id, kind: "document", name: document.name, domain: document.domain });
      let chunk: DescriptorDocument[] = [];
      let size = 0;
      for (const descriptor of document.descriptors) {
        chunk.push(descriptor);
        size += countDescriptors(descriptor);
        if (size >= DESCRIPTORS_PER_MESSAGE) {
          replies.push({ id, kind: "descriptors", descriptors: chunk });
          chunk = [];
          size = 0;
        }
      }
      if (chunk.length > 0) replies.push({ id, kind: "descriptors", descriptors: chunk });
    }
    replies.push({ id, kind: "done" });
  } catch (error) {
    const config = error instanceof ConfigError;
    // Nothing of a failed request is sent but its error.
    replies.length = 0;
    replies.push({
      id,
      kind: "error",
      source: config ? error.source : undefined,
      reason: config ? error.reason : messageOf(error),
    });
  }
  return replies;
}

function countDescriptors(descriptor: DescriptorDocument): number {
  let count = 1;
  for (const child of descriptor.descriptors) count += countDescriptors(child);
  return count;
}
