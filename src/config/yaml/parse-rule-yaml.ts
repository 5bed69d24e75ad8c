import { constructFromEvents, parseEvents, YAMLException } from "js-yaml";
import { ConfigError } from "../../errors.js";
import type { RuleDocument } from "../rule-document.js";
import { aliasingProblem } from "./alias-expansion.js";
import { decodeRuleDocument } from "./decode-rule-document.js";
import { misplacedExtensionKey } from "./extension-key-placement.js";
import { unmarshalMismatchText } from "./go-format.js";
import { firstKeyProblem } from "./validate-yaml-keys.js";
import { lineOfPath } from "./yaml-locations.js";
import { RULE_YAML_SCHEMA } from "./yaml-schema.js";

/**
 * Parses one rule file as the reference does: YAML into an untyped map, the key whitelist pass, then the
 * typed pass. Only the first YAML document counts (yaml.v2 `Unmarshal` never reads further, so a broken
 * later document is no error); an empty file is an empty document. Throws {@link ConfigError} with the
 * reference's texts, prefixed with `name`. Syntax errors carry js-yaml's wording in yaml.v2's shape
 * (`yaml: line N: <reason>`): libyaml's own wording cannot be reproduced.
 */
export function parseRuleYaml(name: string, source: string): RuleDocument {
  const root = firstDocument(name, source) ?? new Map();
  if (!(root instanceof Map)) {
    const line = lineOfPath(source, []) ?? 1;
    const mismatch = unmarshalMismatchText(root, "map[interface {}]interface {}");
    throw new ConfigError(
      name,
      `error loading config file: yaml: unmarshal errors:\n  line ${line}: ${mismatch}`,
    );
  }
  const keyProblem = firstKeyProblem(root);
  if (keyProblem !== undefined) throw new ConfigError(name, keyProblem);
  const placementProblem = misplacedExtensionKey(root);
  if (placementProblem !== undefined) throw new ConfigError(name, placementProblem);
  const { document, problems, metadataProblems } = decodeRuleDocument(name, root);
  if (problems.length > 0) {
    const lines = problems.map((p) => `  line ${lineOfPath(source, p.path) ?? 1}: ${p.message}`);
    throw new ConfigError(name, `error loading config file: yaml: unmarshal errors:\n${lines.join("\n")}`);
  }
  if (metadataProblems.length > 0) throw new ConfigError(name, metadataProblems[0]!);
  return document;
}

/**
 * The first document of `source`, or the text of yaml.v2's alias error, found before the document is built:
 * an alias bomb would expand exponentially in every walk of the built tree.
 */
function load(source: string): { readonly value: unknown } | { readonly aliasing: string } {
  const events = parseEvents(source, {});
  const aliasing = aliasingProblem(events, source);
  if (aliasing !== undefined) return { aliasing };
  // `json: true` lets a repeated key override the earlier one, as yaml.v2 does, instead of failing.
  return { value: constructFromEvents(events, { source, schema: RULE_YAML_SCHEMA, json: true })[0] };
}

function firstDocument(name: string, source: string): unknown {
  const loaded = loadWithin(name, source);
  if ("aliasing" in loaded) throw new ConfigError(name, `error loading config file: ${loaded.aliasing}`);
  return loaded.value;
}

function loadWithin(name: string, source: string): ReturnType<typeof load> {
  try {
    return load(source);
  } catch (error) {
    // js-yaml reads every document; retry with the first one alone when the error lies beyond it.
    const end = firstDocumentEnd(source);
    const position = error instanceof YAMLException ? (error.mark?.position ?? 0) : 0;
    if (end !== undefined && position >= end) {
      try {
        return load(source.slice(0, end));
      } catch {
        // Fall through: report the original error.
      }
    }
    throw new ConfigError(name, `error loading config file: ${yamlErrorText(error)}`);
  }
}

/**
 * Offset where the first document ends: the first `...` line, or the first `---` line that does not open
 * the first document itself. Undefined for a single-document source.
 */
function firstDocumentEnd(source: string): number | undefined {
  const markers = [...source.matchAll(/^(?:---|\.\.\.)(?=[ \t]|\r?\n|$)/gm)];
  const opener = /^(?:(?:[ \t]*(?:#.*)?|%.*)\r?\n)*---(?=[ \t]|\r?\n|$)/.exec(source);
  for (const marker of markers) {
    if (opener !== null && marker.index === opener[0].length - 3) continue;
    return marker.index;
  }
  return undefined;
}

/** `yaml: line N: reason`, the shape of yaml.v2's syntax errors. */
function yamlErrorText(error: unknown): string {
  if (error instanceof YAMLException) {
    return error.mark ? `yaml: line ${error.mark.line + 1}: ${error.reason}` : `yaml: ${error.reason}`;
  }
  return `yaml: ${error instanceof Error ? error.message : String(error)}`;
}
