import type { RuleNodeJson } from "../console/console-contract";

/**
 * The full keys of the rows to show for a text filter (case-insensitive substring of key, value or full
 * key): every matching row, its ancestors (so it stays in its tree) and its descendants.
 */
export function visibleKeys(rules: readonly RuleNodeJson[], text: string): Set<string> {
  const needle = text.trim().toLowerCase();
  const visible = new Set<string>();
  const addAll = (node: RuleNodeJson) => {
    visible.add(node.fullKey);
    node.children.forEach(addAll);
  };
  const visit = (node: RuleNodeJson): boolean => {
    if (matches(node, needle)) {
      addAll(node);
      return true;
    }
    let any = false;
    for (const child of node.children) any = visit(child) || any;
    if (any) visible.add(node.fullKey);
    return any;
  };
  rules.forEach(visit);
  return visible;
}

function matches(node: RuleNodeJson, needle: string): boolean {
  return (
    needle === "" ||
    node.key.toLowerCase().includes(needle) ||
    node.value.toLowerCase().includes(needle) ||
    node.fullKey.toLowerCase().includes(needle)
  );
}

/** A search typed as a descriptor: `domain=rl; k=v, k2=v2`, or `k=v, …` with the domain selector's. */
export function descriptorSearch(
  text: string,
  selectedDomain: string,
): { domain: string; line: string } | null {
  if (!text.includes("=")) return null;
  const parts = text.split(";").map((part) => part.trim());
  let domain = selectedDomain;
  const first = parts[0] ?? "";
  if (parts.length > 1 && /^domain\s*=/.test(first)) {
    domain = first.slice(first.indexOf("=") + 1).trim();
    parts.shift();
  }
  return { domain, line: parts.join(", ") };
}
