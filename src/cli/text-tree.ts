/** One line of a printed tree and the lines under it. */
export interface TreeNode {
  readonly text: string;
  readonly children?: readonly TreeNode[];
}

/**
 * A tree drawn as `tree(1)` draws one: each root flush left, its children under it behind `├─ ` and
 * `└─ `, deeper levels indented by `│  ` (or spaces below a last child). One string per line.
 */
export function treeLines(roots: readonly TreeNode[]): string[] {
  const lines: string[] = [];
  for (const root of roots) {
    lines.push(root.text);
    drawChildren(root.children ?? [], "", lines);
  }
  return lines;
}

function drawChildren(children: readonly TreeNode[], indent: string, lines: string[]): void {
  children.forEach((child, i) => {
    const last = i === children.length - 1;
    lines.push(`${indent}${last ? "└─ " : "├─ "}${child.text}`);
    drawChildren(child.children ?? [], `${indent}${last ? "   " : "│  "}`, lines);
  });
}
