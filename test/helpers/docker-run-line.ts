/** What a documented `docker run` command line asks for. */
export interface DockerRunLine {
  /** `--name`, when given. */
  readonly name: string | undefined;
  /** `--network`, when given. */
  readonly network: string | undefined;
  /** `-d`: detached. */
  readonly detached: boolean;
  /** `-p [ip:]host:container` pairs, as written. */
  readonly ports: readonly string[];
  /** `-v source:target[:ro]` mounts, with `$PWD` left as written. */
  readonly volumes: readonly { readonly source: string; readonly target: string }[];
  /** `-e NAME=value` settings, in order (an empty value is kept: `-e RUNTIME_SUBDIRECTORY=`). */
  readonly env: Readonly<Record<string, string>>;
  /** The image name, the first word after the options. */
  readonly image: string;
  /** Words after the image (the container's command). */
  readonly args: readonly string[];
}

/** Every `docker …` command of a text: its words after `docker` (`["network", "create", "x"]`). */
export function dockerCommands(text: string, prefix: RegExp = /^/): string[][] {
  const lines = text.split("\n").map((line) => line.replace(prefix, "").trim());
  const commands: string[][] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith("docker ")) continue;
    let command = "";
    for (; i < lines.length; i++) {
      const line = lines[i]!;
      command += ` ${line.replace(/\\$/, "")}`;
      if (!line.endsWith("\\")) break;
    }
    commands.push(shellWords(command).slice(1));
  }
  return commands;
}

/**
 * Every `docker run` command in `text`, parsed: lines continued with a trailing backslash are joined;
 * `prefix` is stripped from every line first (`/^#\s*(Run:)?/` for a Dockerfile's comments). Words are
 * split on blanks, double quotes group. Throws on an option other than -d, -p, -v, -e, --name, --network.
 */
export function parseDockerRunLines(text: string, prefix: RegExp = /^/): DockerRunLine[] {
  return dockerCommands(text, prefix)
    .filter((words) => words[0] === "run")
    .map((words) => parseRun(words.slice(1)));
}

/** The first `docker run` of `text` whose image is `image` (see {@link parseDockerRunLines}). */
export function parseDockerRunLine(text: string, image = "ratelimitd", prefix: RegExp = /^/): DockerRunLine {
  const found = parseDockerRunLines(text, prefix).find((line) => line.image === image);
  if (found === undefined) throw new Error(`no \`docker run\` line of image ${image}`);
  return found;
}

function parseRun(words: readonly string[]): DockerRunLine {
  const ports: string[] = [];
  const volumes: { source: string; target: string }[] = [];
  const env: Record<string, string> = {};
  let name: string | undefined;
  let network: string | undefined;
  let detached = false;
  let i = 0;
  for (; i < words.length && words[i]!.startsWith("-"); i += 2) {
    const [option, value] = [words[i]!, words[i + 1] ?? ""];
    if (option === "-d") {
      detached = true;
      i -= 1;
    } else if (option === "-p") ports.push(value);
    else if (option === "--name") name = value;
    else if (option === "--network") network = value;
    else if (option === "-v") {
      const [source = "", target = ""] = value.split(":");
      volumes.push({ source, target });
    } else if (option === "-e") {
      const eq = value.indexOf("=");
      env[value.slice(0, eq)] = value.slice(eq + 1);
    } else throw new Error(`unexpected docker run option ${option}`);
  }
  return { name, network, detached, ports, volumes, env, image: words[i] ?? "", args: words.slice(i + 1) };
}

function shellWords(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}
