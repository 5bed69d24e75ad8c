import { EVENT_ID, type Event, SCALAR_STYLE } from "js-yaml";

/**
 * yaml.v2's defence against alias bombs ("billion laughs"), which the reference inherits. Its decoder counts
 * every node it decodes — the document, each key and value, an alias node and then, once more, every node
 * reached through that alias — and fails with `document contains excessive aliasing` as soon as more than
 * 100 aliased nodes are more than 99 % of more than 1,000 decoded ones (the share allowed falls linearly to
 * 10 % between 400,000 and 4,000,000 decoded nodes). An alias met again while it is being expanded fails
 * with `anchor '<name>' value contains itself`.
 *
 * The count runs over the parser's events, before anything is built: a JavaScript tree shares one object
 * for an anchor and all its aliases, so building it is cheap, but every later walk of that tree would visit
 * the whole expansion.
 */

const RATIO_RANGE_LOW = 400_000;
const RATIO_RANGE_HIGH = 4_000_000;

/** yaml.v2's message once the aliased share is too high (the caller adds `error loading config file: `). */
export const EXCESSIVE_ALIASING = "yaml: document contains excessive aliasing";

function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= RATIO_RANGE_LOW) return 0.99;
  if (decodeCount >= RATIO_RANGE_HIGH) return 0.1;
  return 0.99 - (0.89 * (decodeCount - RATIO_RANGE_LOW)) / (RATIO_RANGE_HIGH - RATIO_RANGE_LOW);
}

/** The first document's events, indexed for the walk. */
interface EventTree {
  readonly events: readonly Event[];
  /** For each node's first event, the index just after its last one. */
  readonly ends: Int32Array;
  /** For each alias event, the index of the node it names (-1 when none: the constructor reports it). */
  readonly targets: Int32Array;
  /** Index of the document's root node, or -1 for an empty document. */
  readonly root: number;
  readonly source: string;
}

/**
 * yaml.v2's verdict on the first document of `events` (from js-yaml's `parseEvents` of `source`): undefined
 * when decoding it stays within the alias rules, else the error text (`yaml: …`). Walks at most a few
 * million nodes, however large the expansion.
 */
export function aliasingProblem(events: readonly Event[], source: string): string | undefined {
  const tree = indexFirstDocument(events, source);
  if (tree.root < 0) return undefined;
  // The document node itself is the first node yaml.v2 decodes.
  let decodeCount = 1;
  let aliasCount = 0;
  // Aliases being expanded (yaml.v2's `d.aliases`).
  const expanding = new Set<number>();
  // Pairs (event index, alias depth); a negative index -1-i marks the end of alias i's expansion.
  const stack: number[] = [tree.root, 0];
  while (stack.length > 0) {
    const depth = stack.pop()!;
    const at = stack.pop()!;
    if (at < 0) {
      expanding.delete(-1 - at);
      continue;
    }
    decodeCount++;
    if (depth > 0) aliasCount++;
    if (aliasCount > 100 && decodeCount > 1000 && aliasCount / decodeCount > allowedAliasRatio(decodeCount)) {
      return EXCESSIVE_ALIASING;
    }
    const event = tree.events[at]!;
    if (event.type === EVENT_ID.ALIAS) {
      const target = tree.targets[at]!;
      if (target < 0) continue;
      if (expanding.has(at)) {
        return `yaml: anchor '${source.slice(event.anchorStart, event.anchorEnd)}' value contains itself`;
      }
      expanding.add(at);
      stack.push(-1 - at, 0, target, depth + 1);
    } else if (event.type === EVENT_ID.SEQUENCE || event.type === EVENT_ID.MAPPING) {
      const visits = event.type === EVENT_ID.SEQUENCE ? childrenOf(tree, at) : mappingVisits(tree, at);
      // Reversed onto the stack, so that they are decoded in order.
      for (let i = visits.length - 1; i >= 0; i--) stack.push(visits[i]!, depth);
    }
  }
  return undefined;
}

function indexFirstDocument(events: readonly Event[], source: string): EventTree {
  const ends = new Int32Array(events.length);
  const targets = new Int32Array(events.length).fill(-1);
  const anchors = new Map<string, number>();
  const open: number[] = [];
  let root = -1;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (event.type === EVENT_ID.POP) {
      const start = open.pop()!;
      ends[start] = i + 1;
      // The first document ends here.
      if (open.length === 0) break;
      continue;
    }
    if (event.type !== EVENT_ID.DOCUMENT && root < 0) root = i;
    if (event.type === EVENT_ID.ALIAS) {
      targets[i] = anchors.get(source.slice(event.anchorStart, event.anchorEnd)) ?? -1;
      ends[i] = i + 1;
      continue;
    }
    // An anchor names its node from the node's start on, as in yaml.v2's parser (so a node can contain an
    // alias of itself), and a later anchor of the same name replaces it.
    if (event.type !== EVENT_ID.DOCUMENT && event.anchorStart >= 0) {
      anchors.set(source.slice(event.anchorStart, event.anchorEnd), i);
    }
    if (event.type === EVENT_ID.SCALAR) ends[i] = i + 1;
    else open.push(i);
  }
  return { events, ends, targets, root, source };
}

function childrenOf(tree: EventTree, collection: number): number[] {
  const children: number[] = [];
  for (let at = collection + 1; tree.events[at]!.type !== EVENT_ID.POP; at = tree.ends[at]!) {
    children.push(at);
  }
  return children;
}

/**
 * The nodes yaml.v2 decodes for a mapping, in order: each key and its value, except that a merge key
 * (`<<`) is not decoded itself and a sequence of maps merged is decoded from its last map to its first.
 */
function mappingVisits(tree: EventTree, mapping: number): number[] {
  const children = childrenOf(tree, mapping);
  const visits: number[] = [];
  for (let i = 0; i + 1 < children.length; i += 2) {
    const key = children[i]!;
    const value = children[i + 1]!;
    if (!isMergeKey(tree, key)) visits.push(key, value);
    else if (tree.events[value]!.type === EVENT_ID.SEQUENCE)
      visits.push(...childrenOf(tree, value).reverse());
    else visits.push(value);
  }
  return visits;
}

function isMergeKey(tree: EventTree, at: number): boolean {
  const event = tree.events[at]!;
  if (event.type !== EVENT_ID.SCALAR) return false;
  if (tree.source.slice(event.valueStart, event.valueEnd) !== "<<") return false;
  if (event.tagStart < 0) return event.style === SCALAR_STYLE.PLAIN;
  const tag = tree.source.slice(event.tagStart, event.tagEnd);
  return tag === "!!merge" || tag === "!<tag:yaml.org,2002:merge>";
}
