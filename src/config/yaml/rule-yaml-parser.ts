import { Worker } from "node:worker_threads";
import { ConfigError } from "../../errors.js";
import { workerEntry } from "../../worker-entry.js";
import { MAX_RULE_SET_DESCRIPTORS } from "../build-rule-set.js";
import type { DescriptorDocument, RuleDocument } from "../rule-document.js";
import type { ParseReply, ParseRequest } from "./rule-yaml-protocol.js";

/** A rule file to parse: the name errors are reported against, and its text. */
export interface RuleYamlFile {
  readonly name: string;
  readonly content: string;
}

interface Job {
  readonly documents: { name: string; domain: string; descriptors: DescriptorDocument[] }[];
  resolve(documents: RuleDocument[]): void;
  reject(error: Error): void;
}

/**
 * Parses rule files ({@link parseRuleYaml}) on a worker thread of its own, started at the first request,
 * and hands the documents back in small messages, so that neither the parse nor the copy of a large rule
 * set blocks the event loop. Requests are answered in order. {@link close} ends the thread; a request in
 * progress then fails.
 */
export class RuleYamlParser {
  #worker: Worker | undefined;
  readonly #jobs = new Map<number, Job>();
  #nextId = 1;
  #closed = false;

  /**
   * The files' documents, in order; rejects with the first file's {@link ConfigError}, or with the
   * `too many descriptors` error of the file that takes the count past `maxDescriptors` (nested descriptors
   * included; default {@link MAX_RULE_SET_DESCRIPTORS}).
   */
  parse(files: readonly RuleYamlFile[], maxDescriptors = MAX_RULE_SET_DESCRIPTORS): Promise<RuleDocument[]> {
    if (this.#closed) return Promise.reject(new Error("the rule parser is closed"));
    const id = this.#nextId++;
    const request: ParseRequest = {
      kind: "parse",
      id,
      files: files.map(({ name, content }) => ({ name, content })),
      maxDescriptors,
    };
    const worker = this.#thread();
    // Only while it has work may the thread keep the process alive.
    worker.ref();
    return new Promise((resolve, reject) => {
      this.#jobs.set(id, { documents: [], resolve, reject });
      worker.postMessage(request);
    });
  }

  /** Stops the worker thread (at once, even mid-parse); pending requests reject. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failAll(new Error("the rule parser is closed"));
    await worker?.terminate();
  }

  #thread(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(workerEntry("rule-yaml-worker", import.meta.url));
    worker.on("message", (reply: ParseReply) => this.#receive(reply));
    worker.on("error", (error) => this.#lost(worker, error));
    worker.on("exit", (code) => this.#lost(worker, new Error(`the rule parser thread exited (${code})`)));
    this.#worker = worker;
    return worker;
  }

  #receive(reply: ParseReply): void {
    const job = this.#jobs.get(reply.id);
    if (job === undefined) return;
    switch (reply.kind) {
      case "document":
        job.documents.push({ name: reply.name, domain: reply.domain, descriptors: [] });
        this.#askForNext(reply.id);
        return;
      case "descriptors":
        job.documents.at(-1)!.descriptors.push(...reply.descriptors);
        this.#askForNext(reply.id);
        return;
      case "done":
        this.#finished(reply.id);
        job.resolve(job.documents);
        return;
      case "error":
        this.#finished(reply.id);
        job.reject(
          reply.source === undefined ? new Error(reply.reason) : new ConfigError(reply.source, reply.reason),
        );
    }
  }

  /** The next reply, in a later event-loop turn: decisions waiting meanwhile go first. */
  #askForNext(id: number): void {
    setImmediate(() => this.#worker?.postMessage({ kind: "next", id } satisfies ParseRequest));
  }

  #finished(id: number): void {
    this.#jobs.delete(id);
    if (this.#jobs.size === 0) this.#worker?.unref();
  }

  /** The thread died (it never should): its requests fail, and the next request starts a new one. */
  #lost(worker: Worker, error: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#failAll(error);
  }

  #failAll(error: Error): void {
    for (const job of this.#jobs.values()) job.reject(error);
    this.#jobs.clear();
  }
}
