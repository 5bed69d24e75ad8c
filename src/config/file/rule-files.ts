import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";

/** Where rule files live: the reference's RUNTIME_* settings. */
export interface RuleFilesLayout {
  readonly runtimeRoot: string;
  readonly runtimeSubdirectory: string;
  readonly runtimeAppDirectory: string;
  /** true: files under ROOT/SUBDIRECTORY named `<appdir>.<file>`; false: files of ROOT/SUBDIRECTORY/APPDIR. */
  readonly watchRoot: boolean;
  readonly ignoreDotfiles: boolean;
}

export interface RuleFile {
  /** The name errors are reported against (`config.basic.yaml` or `basic.yaml`, as the reference). */
  readonly name: string;
  readonly path: string;
  readonly content: string;
}

/** The directory whose files are read, or undefined when the layout selects none. */
export function ruleDirectory(layout: RuleFilesLayout): string | undefined {
  if (layout.watchRoot) {
    // goruntime returns no loader at all for an empty subdirectory, so the reference loads no files.
    return layout.runtimeSubdirectory === ""
      ? undefined
      : join(layout.runtimeRoot, layout.runtimeSubdirectory);
  }
  return join(layout.runtimeRoot, layout.runtimeSubdirectory, layout.runtimeAppDirectory);
}

/**
 * Reads every rule file of the layout, as goruntime snapshots them: all files recursively (no extension
 * filter; symlinked directories other than the root are not entered), names relative to the directory with `/` turned into `.`. In watch-root mode only
 * names starting with `<RUNTIME_APPDIRECTORY>.` are kept. Sorted by name for a deterministic load order.
 * A missing directory yields no files.
 */
export async function readRuleFiles(layout: RuleFilesLayout): Promise<RuleFile[]> {
  const directory = ruleDirectory(layout);
  if (directory === undefined) return [];
  const paths = await listFiles(directory, layout.ignoreDotfiles);
  const files: RuleFile[] = [];
  for (const path of paths) {
    const name = relative(directory, path).split(sep).join(".");
    if (layout.watchRoot && !name.startsWith(`${layout.runtimeAppDirectory}.`)) continue;
    files.push({ name, path, content: await readFile(path, "utf8") });
  }
  return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function listFiles(directory: string, ignoreDotfiles: boolean): Promise<string[]> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const files: string[] = [];
  for (const entry of entries) {
    if (ignoreDotfiles && entry.name.startsWith(".")) continue;
    const path = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...(await listFiles(path, ignoreDotfiles)));
    else if (entry.isFile()) files.push(path);
    else if (entry.isSymbolicLink()) {
      // As goruntime's filepath.Walk: a symlink to a file is read, a symlink to a directory is not entered
      // (a Kubernetes ConfigMap's `..data` link), only the root itself is followed.
      const target = await stat(path).catch(() => undefined);
      if (target?.isFile()) files.push(path);
    }
  }
  return files;
}
