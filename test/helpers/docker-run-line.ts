/** What a documented `docker run` command line asks for. */
export interface DockerRunLine {
  /** `-p host:container` pairs, as written. */
  readonly ports: readonly string[];
  /** `-v source:target` mounts, with `$PWD` left as written. */
  readonly volumes: readonly { readonly source: string; readonly target: string }[];
  /** `-e NAME=value` settings, in order (an empty value is kept: `-e RUNTIME_SUBDIRECTORY=`). */
  readonly env: Readonly<Record<string, string>>;
  /** The image name, the first word after the options. */
  readonly image: string;
}

/**
 * Finds the first `docker run` command in `text` and parses it: lines continued with a trailing backslash
 * are joined; `prefix` is stripped from every line first (`/^#\s*(Run:)?/` for a Dockerfile's comments).
 * Words are split on blanks, double quotes group. Throws when there is no `docker run` or an option is
 * not one of -p, -v, -e.
 */
export function parseDockerRunLine(text: string, prefix: RegExp = /^/): DockerRunLine {
  const lines = text.split("\n").map((line) => line.replace(prefix, "").trim());
  const first = lines.findIndex((line) => line.startsWith("docker run "));
  if (first < 0) throw new Error("no `docker run` line");
  let command = "";
  for (let i = first; i < lines.length; i++) {
    const line = lines[i]!;
    command += ` ${line.replace(/\\$/, "")}`;
    if (!line.endsWith("\\")) break;
  }
  const words = shellWords(command).slice(2);
  const ports: string[] = [];
  const volumes: { source: string; target: string }[] = [];
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < words.length && words[i]!.startsWith("-"); i += 2) {
    const [option, value] = [words[i]!, words[i + 1] ?? ""];
    if (option === "-p") ports.push(value);
    else if (option === "-v") {
      const [source = "", target = ""] = value.split(":");
      volumes.push({ source, target });
    } else if (option === "-e") {
      const eq = value.indexOf("=");
      env[value.slice(0, eq)] = value.slice(eq + 1);
    } else throw new Error(`unexpected docker run option ${option}`);
  }
  return { ports, volumes, env, image: words[i] ?? "" };
}

function shellWords(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}
