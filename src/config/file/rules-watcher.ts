import { stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { type FSWatcher, watch } from "chokidar";
import { type RuleFilesLayout, ruleDirectory } from "./rule-files.js";

/** When to reload after file events: quiet period and the longest a burst may postpone a reload. */
export interface ReloadTiming {
  /** Reload once no event came for this long (default 250 ms). */
  readonly quietMs: number;
  /** …but never later than this after the first event of a burst (default 1 s). */
  readonly maxDelayMs: number;
  /** While the watched directory does not exist, look for it this often (default 1 s). */
  readonly missingPollMs: number;
}

export const DEFAULT_RELOAD_TIMING: ReloadTiming = { quietMs: 250, maxDelayMs: 1000, missingPollMs: 1000 };

/**
 * Watches rule files the reference's two ways and calls `onChange` once per burst of events:
 * - RUNTIME_WATCH_ROOT=true: the parent of RUNTIME_ROOT, for a change of RUNTIME_ROOT itself (an atomic
 *   symlink swap `ln -s new tmp && mv -T tmp current`); edits inside the tree do nothing, as the reference.
 * - RUNTIME_WATCH_ROOT=false: the app directory (not recursive): any file added, written, chmod-ed or removed,
 *   dot entries included (a Kubernetes ConfigMap update only swaps its `..data` link).
 * A watched directory that does not exist (yet, or any more) is looked for every `missingPollMs`; when it
 * appears it is watched and `onChange` is called. (The reference cannot watch a missing directory at all:
 * goruntime's `unable to watch file`, a panic at start; fsnotify, like chokidar, needs the directory.)
 */
export class RulesWatcher {
  #watcher: FSWatcher | undefined;
  #poll: NodeJS.Timeout | undefined;
  #quiet: NodeJS.Timeout | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly layout: RuleFilesLayout,
    private readonly onChange: () => void,
    private readonly timing: ReloadTiming = DEFAULT_RELOAD_TIMING,
  ) {}

  /** Starts watching; resolves once the watcher is ready (changes after that are seen). */
  async start(): Promise<void> {
    const watched = this.#watchedDirectory();
    if (watched === undefined) return;
    if (await isDirectory(watched)) await this.#watch(watched);
    else this.#pollUntilPresent(watched);
  }

  /** The directory events come from: RUNTIME_ROOT's parent, or the app directory. */
  #watchedDirectory(): string | undefined {
    return this.layout.watchRoot ? dirname(resolve(this.layout.runtimeRoot)) : ruleDirectory(this.layout);
  }

  #watch(watched: string): Promise<void> {
    const root = resolve(this.layout.runtimeRoot);
    const watcher = watch(watched, { depth: 0, ignoreInitial: true, followSymlinks: false });
    this.#watcher = watcher;
    // chokidar reports symlinks that already exist as `add` events despite ignoreInitial (its issues #804,
    // #1270): only events after `ready` are changes. The first load runs after `ready`, so none is lost.
    let ready = false;
    watcher.on("all", (_event, path) => {
      if (ready && (!this.layout.watchRoot || resolve(path) === root)) this.#schedule();
    });
    // The watched directory itself removed: its watch is dead, so the next reload looks for it again.
    watcher.on("unlinkDir", (path) => {
      if (resolve(path) === resolve(watched)) this.#schedule();
    });
    if (!this.layout.watchRoot) {
      // The reference reloads on Chmod too (fsnotify's IN_ATTRIB). chokidar drops a change event that
      // leaves the mtime alone, so the app directory's raw fs.watch events are taken as well; reading the
      // files raises none, so a reload does not trigger itself.
      watcher.on("raw", () => {
        if (ready) this.#schedule();
      });
    }
    // A watcher error (e.g. the directory vanished) must not crash the daemon; the next event retries.
    watcher.on("error", () => {});
    return new Promise((resolveReady) =>
      watcher.once("ready", () => {
        ready = true;
        resolveReady();
      }),
    );
  }

  /** Looks for `watched` every `missingPollMs`; once it is a directory, watches it and reloads. */
  #pollUntilPresent(watched: string): void {
    const look = async () => {
      if (this.#closed) return;
      if (!(await isDirectory(watched))) {
        this.#poll = setTimeout(() => void look(), this.timing.missingPollMs).unref();
        return;
      }
      this.#poll = undefined;
      await this.#watch(watched);
      if (this.#closed) await this.#watcher?.close();
      else this.#schedule();
    };
    // Unref'd: looking for rules never keeps a process alive by itself.
    this.#poll = setTimeout(() => void look(), this.timing.missingPollMs).unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#poll);
    clearTimeout(this.#quiet);
    clearTimeout(this.#deadline);
    await this.#watcher?.close();
  }

  #schedule(): void {
    clearTimeout(this.#quiet);
    this.#quiet = setTimeout(() => this.#fire(), this.timing.quietMs);
    this.#deadline ??= setTimeout(() => this.#fire(), this.timing.maxDelayMs);
  }

  #fire(): void {
    clearTimeout(this.#quiet);
    clearTimeout(this.#deadline);
    this.#quiet = undefined;
    this.#deadline = undefined;
    this.onChange();
    void this.#rewatchIfGone();
  }

  /** After a change: a watched directory that is gone is looked for again until it comes back. */
  async #rewatchIfGone(): Promise<void> {
    const watched = this.#watchedDirectory();
    if (watched === undefined || this.#watcher === undefined || this.#closed) return;
    if (await isDirectory(watched)) return;
    const dead = this.#watcher;
    this.#watcher = undefined;
    await dead.close();
    if (!this.#closed) this.#pollUntilPresent(watched);
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}
