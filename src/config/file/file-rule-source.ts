import { messageOf } from "../../errors.js";
import type { RuleDocument } from "../rule-document.js";
import type { RuleCompiler, RuleSource, RuleUpdate } from "../rule-source.js";
import { parseRuleYaml } from "../yaml/parse-rule-yaml.js";
import { type RuleFilesLayout, readRuleFiles } from "./rule-files.js";
import { DEFAULT_RELOAD_TIMING, type ReloadTiming, RulesWatcher } from "./rules-watcher.js";

/** Options of {@link FileRuleSource}. */
export interface FileRuleSourceOptions {
  readonly layout: RuleFilesLayout;
  readonly compile: RuleCompiler;
  /** Hot reload on file changes (default true). */
  readonly watch?: boolean;
  readonly reloadTiming?: ReloadTiming;
  /** Told before each reload (for a debug log line). */
  readonly onReloading?: () => void;
}

/**
 * Rules from YAML files (`CONFIG_TYPE=FILE`), reloaded when they change. Every load re-reads and
 * re-validates all files; any error rejects the whole set. Reloads never overlap: changes during a reload
 * cause one more reload after it.
 */
export class FileRuleSource implements RuleSource {
  readonly #options: FileRuleSourceOptions;
  readonly #watcher: RulesWatcher | undefined;
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
      const files = await readRuleFiles(this.#options.layout);
      const documents: RuleDocument[] = files.map((file) => parseRuleYaml(file.name, file.content));
      return { ok: true, rules: this.#options.compile(documents) };
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error : new Error(messageOf(error)) };
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#watcher?.close();
    await this.#loading;
  }

  #reload(): void {
    if (this.#loading) {
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
