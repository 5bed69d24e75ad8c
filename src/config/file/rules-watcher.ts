import { dirname, resolve } from "node:path";
import { type FSWatcher, watch } from "chokidar";
import { type RuleFilesLayout, ruleDirectory } from "./rule-files.js";

/** When to reload after file events: quiet period and the longest a burst may postpone a reload. */
export interface ReloadTiming {
  /** Reload once no event came for this long (default 250 ms). */
  readonly quietMs: number;
  /** …but never later than this after the first event of a burst (default 1 s). */
  readonly maxDelayMs: number;
}

export const DEFAULT_RELOAD_TIMING: ReloadTiming = { quietMs: 250, maxDelayMs: 1000 };

/**
 * Watches rule files the reference's two ways and calls `onChange` once per burst of events:
 * - RUNTIME_WATCH_ROOT=true: the parent of RUNTIME_ROOT, for a change of RUNTIME_ROOT itself (an atomic
 *   symlink swap `ln -s new tmp && mv -T tmp current`); edits inside the tree do nothing, as the reference.
 * - RUNTIME_WATCH_ROOT=false: the app directory (not recursive): any file added, written, chmod-ed or removed,
 *   dot entries included (a Kubernetes ConfigMap update only swaps its `..data` link).
 */
export class RulesWatcher {
  #watcher: FSWatcher | undefined;
  #quiet: NodeJS.Timeout | undefined;
  #deadline: NodeJS.Timeout | undefined;

  constructor(
    private readonly layout: RuleFilesLayout,
    private readonly onChange: () => void,
    private readonly timing: ReloadTiming = DEFAULT_RELOAD_TIMING,
  ) {}

  /** Starts watching; resolves once the watcher is ready (changes after that are seen). */
  start(): Promise<void> {
    const root = resolve(this.layout.runtimeRoot);
    const watched = this.layout.watchRoot ? dirname(root) : ruleDirectory(this.layout);
    if (watched === undefined) return Promise.resolve();
    const watcher = watch(watched, { depth: 0, ignoreInitial: true, followSymlinks: false });
    this.#watcher = watcher;
    // chokidar reports symlinks that already exist as `add` events despite ignoreInitial (its issues #804,
    // #1270): only events after `ready` are changes. The first load runs after `ready`, so none is lost.
    let ready = false;
    watcher.on("all", (_event, path) => {
      if (ready && (!this.layout.watchRoot || resolve(path) === root)) this.#schedule();
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

  async close(): Promise<void> {
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
  }
}
