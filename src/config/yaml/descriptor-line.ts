import type { DescriptorDocument } from "../rule-document.js";
import { parseRuleYaml } from "./parse-rule-yaml.js";
import { lineOfPath, type YamlPathStep } from "./yaml-locations.js";

/**
 * The 1-based line of the descriptor `composites` (`key_value` or `key`, from the top level down) in the
 * rule file `text` named `name`, as it was compiled; undefined when the file does not hold it (it changed,
 * or the descriptor came from another file of the same domain). For `POST /explain`; parses the file again.
 */
export function descriptorLine(
  name: string,
  text: string,
  composites: readonly string[],
): number | undefined {
  let document: ReturnType<typeof parseRuleYaml>;
  try {
    document = parseRuleYaml(name, text);
  } catch {
    return undefined;
  }
  const path: YamlPathStep[] = [];
  let descriptors: readonly DescriptorDocument[] = document.descriptors;
  for (const composite of composites) {
    const index = descriptors.findIndex(
      (d) => (d.value === "" ? d.key : `${d.key}_${d.value}`) === composite,
    );
    if (index < 0) return undefined;
    path.push("descriptors", index);
    descriptors = descriptors[index]!.descriptors;
  }
  return lineOfPath(text, path);
}
