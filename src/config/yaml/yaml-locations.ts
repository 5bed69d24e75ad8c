import { EVENT_ID, type Event, getScalarValue, parseEvents } from "js-yaml";

/** A step into a YAML document: a mapping key or a sequence index. */
export type YamlPathStep = string | number;

/**
 * The 1-based line of the node at `path` in `source`, for error messages; undefined when the path does
 * not exist. Only called on the error path, so it re-parses.
 */
export function lineOfPath(source: string, path: readonly YamlPathStep[]): number | undefined {
  let events: Event[];
  try {
    events = parseEvents(source, {});
  } catch {
    // Only the first document was readable; lines are a courtesy in error messages.
    return undefined;
  }
  const at = findNode(events, source, 1, path, 0);
  if (at === undefined) return undefined;
  const offset = offsetOf(events[at]!);
  let line = 1;
  for (let i = 0; i < offset; i++) if (source.charCodeAt(i) === 10) line++;
  return line;
}

function offsetOf(event: Event): number {
  switch (event.type) {
    case EVENT_ID.SCALAR:
      return Math.min(...[event.valueStart, event.anchorStart, event.tagStart].filter((n) => n >= 0));
    case EVENT_ID.ALIAS:
      return event.anchorStart;
    case EVENT_ID.MAPPING:
    case EVENT_ID.SEQUENCE:
      return event.start;
    default:
      return 0;
  }
}

/** Index just past the node starting at `index`. */
function skipNode(events: readonly Event[], index: number): number {
  const type = events[index]?.type;
  if (type !== EVENT_ID.MAPPING && type !== EVENT_ID.SEQUENCE) return index + 1;
  let i = index + 1;
  while (i < events.length && events[i]!.type !== EVENT_ID.POP) i = skipNode(events, i);
  return i + 1;
}

function findNode(
  events: readonly Event[],
  source: string,
  index: number,
  path: readonly YamlPathStep[],
  depth: number,
): number | undefined {
  if (depth === path.length) return index;
  const event = events[index];
  const step = path[depth];
  let i = index + 1;
  if (event?.type === EVENT_ID.MAPPING) {
    let found: number | undefined;
    while (i < events.length && events[i]!.type !== EVENT_ID.POP) {
      const key = events[i]!;
      const valueIndex = skipNode(events, i);
      if (key.type === EVENT_ID.SCALAR && getScalarValue(source, key) === step) found = valueIndex;
      i = skipNode(events, valueIndex);
    }
    return found === undefined ? undefined : findNode(events, source, found, path, depth + 1);
  }
  if (event?.type === EVENT_ID.SEQUENCE) {
    for (let n = 0; i < events.length && events[i]!.type !== EVENT_ID.POP; n++) {
      if (n === step) return findNode(events, source, i, path, depth + 1);
      i = skipNode(events, i);
    }
  }
  return undefined;
}
