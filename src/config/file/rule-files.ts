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

/** What one read of the rule directory found. */
export interface RuleFileSet {
  /** The files, sorted by name. */
  readonly files: RuleFile[];
  /** The directory the layout names does not exist (so there are no files). */
  readonly directoryMissing: boolean;
}

/**
 * Reads every rule file of the layout, as goruntime snapshots them: all files recursively (no extension
 * filter; symlinked directories other than the root are not entered), names relative to the directory with
 * `/` turned into `.`. In watch-root mode only names starting with `<RUNTIME_APPDIRECTORY>.` are kept.
 * Sorted by name for a deterministic load order. A missing directory yields no files.
 */
export async function readRuleFiles(layout: RuleFilesLayout): Promise<RuleFileSet> {
  const directory = ruleDirectory(layout);
  if (directory === undefined) return { files: [], directoryMissing: false };
  const paths = await listFiles(directory, layout.ignoreDotfiles);
  if (paths === undefined) return { files: [], directoryMissing: true };
  const files: RuleFile[] = [];
  for (const path of paths) {
    const name = relative(directory, path).split(sep).join(".");
    if (layout.watchRoot && !name.startsWith(`${layout.runtimeAppDirectory}.`)) continue;
    files.push({ name, path, content: await readFile(path, "utf8") });
  }
  files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { files, directoryMissing: false };
}

const NOTHING_LOADED = "no rate limit rules are loaded and every request is allowed";

/**
 * Why a read found no rule files, as a warning naming the directory and when rules will load, or undefined
 * when it found some. Where the reference notices at all, goruntime either cannot watch the directory and
 * the service panics at start (the app directory with RUNTIME_WATCH_ROOT=false, RUNTIME_ROOT's parent with
 * true), or logs `runtime: error processing <dir>: lstat …`; ratelimitd keeps running, since the directory
 * may appear later.
 */
export function noRuleFilesWarning(layout: RuleFilesLayout, found: RuleFileSet): string | undefined {
  if (found.files.length > 0) return undefined;
  const directory = ruleDirectory(layout);
  if (directory === undefined) {
    return `RUNTIME_SUBDIRECTORY is empty with RUNTIME_WATCH_ROOT=true, so no rule files are read (as the reference): ${NOTHING_LOADED}`;
  }
  if (found.directoryMissing) {
    return layout.watchRoot
      ? `rule directory ${directory} (RUNTIME_ROOT/RUNTIME_SUBDIRECTORY) does not exist: ${NOTHING_LOADED}; with RUNTIME_WATCH_ROOT=true the rules load when RUNTIME_ROOT is next created or replaced`
      : `rule directory ${directory} (RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY) does not exist: ${NOTHING_LOADED}; the rules load as soon as it is created`;
  }
  return layout.watchRoot
    ? `no rule files in ${directory} (files under ${layout.runtimeAppDirectory}/, or named ${layout.runtimeAppDirectory}.*): ${NOTHING_LOADED}`
    : `rule directory ${directory} has no rule files: ${NOTHING_LOADED}`;
}

/** Every file under `directory`, or undefined when it does not exist. */
async function listFiles(directory: string, ignoreDotfiles: boolean): Promise<string[] | undefined> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const files: string[] = [];
  for (const entry of entries) {
    if (ignoreDotfiles && entry.name.startsWith(".")) continue;
    const path = join(directory, entry.name);
    // A subdirectory removed since the listing has no files.
    if (entry.isDirectory()) files.push(...((await listFiles(path, ignoreDotfiles)) ?? []));
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
