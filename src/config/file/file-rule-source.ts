import { createHash } from "node:crypto";
import type { RuleSetOrigin } from "../../engine/rule-set.js";
import { messageOf } from "../../errors.js";
import { MAX_RULE_SET_DESCRIPTORS } from "../build-rule-set.js";
import type { RuleCompiler, RuleSource, RuleUpdate } from "../rule-source.js";
import { RuleYamlParser } from "../yaml/rule-yaml-parser.js";
import { noRuleFilesWarning, type RuleFile, type RuleFilesLayout, readRuleFiles } from "./rule-files.js";
import { DEFAULT_RELOAD_TIMING, type ReloadTiming, RulesWatcher } from "./rules-watcher.js";

/** Options of {@link FileRuleSource}. */
export interface FileRuleSourceOptions {
  readonly layout: RuleFilesLayout;
  readonly compile: RuleCompiler;
  /**
   * The most descriptors the files may hold in all (CONFIG_MAX_DESCRIPTORS, default
   * {@link MAX_RULE_SET_DESCRIPTORS}): checked as the files are parsed, before anything is compiled.
   */
  readonly maxDescriptors?: number;
  /** Hot reload on file changes (default true). */
  readonly watch?: boolean;
  readonly reloadTiming?: ReloadTiming;
  /** Told before each reload (for a debug log line). */
  readonly onReloading?: () => void;
  /**
   * Told on every load that finds no rule files, why: the directory is missing or empty (the load still
   * succeeds, with no rules, as the reference's does).
   */
  readonly warn?: (line: string) => void;
  /** Told when files change while a reload runs, which causes one more reload after it (a debug line). */
  readonly onReloadQueued?: () => void;
}

/**
 * Rules from YAML files (`CONFIG_TYPE=FILE`), reloaded when they change. Every load re-reads and
 * re-validates all files (parsed on a worker thread, compiled in slices, so decisions go on meanwhile); any
 * error rejects the whole set. Reloads never overlap: changes during a reload cause one more reload after
 * it, so the last change always wins.
 */
export class FileRuleSource implements RuleSource {
  readonly #options: FileRuleSourceOptions;
  readonly #watcher: RulesWatcher | undefined;
  readonly #parser = new RuleYamlParser();
  /** Aborted by {@link stop}: ends a compilation in progress. */
  readonly #stopping = new AbortController();
  #onUpdate: ((update: RuleUpdate) => void) | undefined;
  #loading: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  constructor(options: FileRuleSourceOptions) {
    this.#options = options;
    this.#watcher =
      options.watch === false
        ? undefined
        : new RulesWatcher(
            options.layout,
            () => this.#reload(),
            options.reloadTiming ?? DEFAULT_RELOAD_TIMING,
          );
  }

  start(onUpdate: (update: RuleUpdate) => void): void {
    this.#onUpdate = onUpdate;
    // Watch first, so a change made while the first load runs is not missed.
    void (this.#watcher?.start() ?? Promise.resolve()).then(() => this.#reload());
  }

  /** Reads, parses and compiles every file once. Never rejects. */
  async load(): Promise<RuleUpdate> {
    try {
      const { layout, warn } = this.#options;
      const found = await readRuleFiles(layout);
      const warning = noRuleFilesWarning(layout, found);
      if (warning !== undefined) warn?.(warning);
      const maxDescriptors = this.#options.maxDescriptors ?? MAX_RULE_SET_DESCRIPTORS;
      const documents = await this.#parser.parse(found.files, maxDescriptors);
      const rules = await this.#options.compile(documents, this.#stopping.signal);
      const loaded = { ...rules, origin: fileOrigin(found.files) };
      return warning === undefined
        ? { ok: true, rules: loaded }
        : { ok: true, rules: loaded, noRuleFiles: true };
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error : new Error(messageOf(error)) };
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    // Ends a load in progress at once (SIGTERM during a long load): the parse thread is stopped, the
    // compilation ends at its next slice, and the outcome is not applied.
    this.#stopping.abort(new Error("the rule source is stopped"));
    await this.#watcher?.close();
    await this.#parser.close();
    await this.#loading;
  }

  #reload(): void {
    if (this.#loading) {
      if (!this.#again) this.#options.onReloadQueued?.();
      this.#again = true;
      return;
    }
    this.#loading = (async () => {
      do {
        this.#again = false;
        this.#options.onReloading?.();
        const update = await this.load();
        if (!this.#stopped) this.#onUpdate?.(update);
      } while (this.#again && !this.#stopped);
      this.#loading = undefined;
    })();
  }
}

/** Where each document of a load came from, for `POST /explain`'s file and line. */
function fileOrigin(files: readonly RuleFile[]): RuleSetOrigin {
  return {
    kind: "file",
    files: new Map(
      files.map((file) => [
        file.name,
        { path: file.path, sha256: createHash("sha256").update(file.content).digest("hex") },
      ]),
    ),
    loadedAtMs: Date.now(),
  };
}
