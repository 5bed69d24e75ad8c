import { type TreeNode, treeLines } from "./text-tree.js";

/**
 * The answer of `POST /explain` on the debug port (docs/explain.md), as far as the client prints it. Every
 * field is optional here: the printer shows what the daemon sent and skips what it did not.
 */
export interface ExplainAnswer {
  readonly domain?: string;
  readonly overallCode?: string;
  readonly rules?: { readonly source?: string; readonly version?: string; readonly loadedAt?: string };
  readonly store?: string;
  readonly descriptors?: readonly ExplainedDescriptor[];
}

/** One descriptor of an {@link ExplainAnswer}, in request order. */
export interface ExplainedDescriptor {
  readonly entries?: readonly Entry[];
  readonly hits?: number;
  readonly search?: readonly SearchLevel[];
  readonly rule?: string | null;
  readonly origin?: {
    readonly file?: string;
    readonly line?: number | null;
    readonly xdsResource?: string;
    readonly version?: string;
  } | null;
  readonly override?: Limit | null;
  readonly replaced?: boolean;
  readonly unlimited?: boolean;
  readonly shadowMode?: boolean;
  readonly quotaMode?: boolean;
  readonly why?: string;
  readonly limits?: readonly ExplainedLimit[];
  /** Exactly the `/json` answer's `statuses[i]` (proto3 JSON: zero values left out). */
  readonly status?: {
    readonly code?: string;
    readonly currentLimit?: Limit;
    readonly limitRemaining?: number;
    readonly durationUntilReset?: string;
  };
}

interface Entry {
  readonly key?: string;
  readonly value?: string;
}

interface Limit {
  readonly name?: string;
  readonly requestsPerUnit?: number;
  readonly unit?: string;
  readonly unitMultiplier?: number;
}

interface SearchLevel {
  readonly entry?: Entry;
  readonly tried?: readonly {
    readonly candidate?: string;
    readonly how?: string;
    readonly matched?: boolean;
  }[];
  readonly matched?: string | null;
  readonly how?: string | null;
}

interface ExplainedLimit extends Limit {
  readonly algorithm?: string;
  readonly windowSeconds?: number;
  readonly burst?: number;
  readonly counters?: readonly { readonly key?: string; readonly value?: number | null }[];
  readonly localCacheHit?: boolean;
  readonly over?: boolean;
  readonly reservation?: {
    readonly estimate?: number;
    readonly ttlSeconds?: number;
    readonly requestId?: string | null;
    readonly ownHold?: boolean;
    readonly used?: number;
    readonly held?: number;
    readonly liveHolds?: number;
    readonly role?: string;
  };
}

/**
 * An explain answer as `ratelimit-client -explain` prints it: a top line (domain, overall code, where the
 * rules came from, the store), then one tree per descriptor: the search level by level with each candidate
 * (✓ matched, ✗ not, and how), the rule and its origin, why, the flags that changed the decision, each limit
 * with its counters, and the status the request would get.
 */
export function explainText(answer: ExplainAnswer): string {
  const trees = (answer.descriptors ?? []).map((descriptor, i) => descriptorTree(descriptor, i + 1));
  return `${[topLine(answer), ...treeLines(trees)].join("\n")}\n`;
}

function topLine(answer: ExplainAnswer): string {
  const about = [`rules: ${rulesText(answer.rules)}`];
  if (answer.store !== undefined) about.push(`store: ${answer.store}`);
  return `domain ${JSON.stringify(answer.domain ?? "")}: ${answer.overallCode ?? "UNKNOWN"} (${about.join("; ")})`;
}

function rulesText(rules: ExplainAnswer["rules"]): string {
  if (rules === undefined) return "unknown";
  const source = rules.source === "xds" ? `xDS version ${rules.version ?? "?"}` : (rules.source ?? "unknown");
  return rules.loadedAt === undefined ? source : `${source}, loaded ${rules.loadedAt}`;
}

function descriptorTree(descriptor: ExplainedDescriptor, index: number): TreeNode {
  const entries = (descriptor.entries ?? []).map(entryText).join(", ") || "(no entries)";
  const hits = descriptor.hits === undefined ? "" : ` (hits ${descriptor.hits})`;
  const children: TreeNode[] = [];
  const search = descriptor.search ?? [];
  if (search.length > 0) children.push({ text: "search", children: search.map(levelNode) });
  children.push({ text: `rule: ${ruleText(descriptor)}` });
  if (descriptor.why !== undefined) children.push({ text: `why: ${descriptor.why}` });
  const flags = flagTexts(descriptor);
  if (flags.length > 0) children.push({ text: `flags: ${flags.join(", ")}` });
  const limits = descriptor.limits ?? [];
  if (limits.length === 0) children.push({ text: "limits: none" });
  for (const limit of limits) children.push(limitNode(limit));
  children.push({ text: `status: ${statusText(descriptor.status)}` });
  return { text: `descriptor ${index}: ${entries}${hits}`, children };
}

function entryText(entry: Entry | undefined): string {
  return `${entry?.key ?? ""}=${entry?.value ?? ""}`;
}

function levelNode(level: SearchLevel, i: number): TreeNode {
  const found = level.matched == null ? "no match" : `${level.matched} (${level.how ?? "?"})`;
  return {
    text: `level ${i + 1}: ${entryText(level.entry)} → ${found}`,
    children: (level.tried ?? []).map((tried) => ({
      text: `${tried.matched ? "✓" : "✗"} ${tried.candidate ?? ""} (${tried.how ?? "?"})`,
    })),
  };
}

function ruleText(descriptor: ExplainedDescriptor): string {
  if (descriptor.rule == null) return "none";
  const origin = descriptor.origin;
  if (origin == null) return descriptor.rule;
  if (origin.xdsResource !== undefined)
    return `${descriptor.rule} (xDS resource ${origin.xdsResource}@${origin.version ?? "?"})`;
  // A line is null when the file no longer holds the text that was loaded (docs/explain.md).
  const line = origin.line == null ? "" : `:${origin.line}`;
  return `${descriptor.rule} (${origin.file ?? "?"}${line})`;
}

function flagTexts(descriptor: ExplainedDescriptor): string[] {
  const flags: string[] = [];
  if (descriptor.override != null) flags.push(`override ${rateText(descriptor.override)}`);
  if (descriptor.replaced) flags.push("replaced");
  if (descriptor.unlimited) flags.push("unlimited");
  if (descriptor.shadowMode) flags.push("shadow mode");
  if (descriptor.quotaMode) flags.push("quota mode");
  return flags;
}

/** `10 per MINUTE×1`: the rule's `requests_per_unit`, `unit` and `unit_multiplier` (1 when left out). */
function rateText(limit: Limit): string {
  return `${limit.requestsPerUnit ?? 0} per ${limit.unit ?? "UNKNOWN"}×${limit.unitMultiplier ?? 1}`;
}

function limitNode(limit: ExplainedLimit): TreeNode {
  const name = limit.name ? JSON.stringify(limit.name) : "(unnamed)";
  const details = [limit.algorithm ?? "?", rateText(limit)];
  if (limit.windowSeconds !== undefined) details.push(`window ${limit.windowSeconds}s`);
  if (limit.burst !== undefined) details.push(`burst ${limit.burst}`);
  const children: TreeNode[] = (limit.counters ?? []).map((counter) => ({
    text: `counter ${counter.key ?? ""} = ${counter.value ?? "none"}`,
  }));
  const reservation = limit.reservation;
  if (reservation !== undefined) {
    const id = reservation.requestId
      ? `request ${reservation.requestId}${reservation.ownHold ? " (holding)" : ""}, `
      : "";
    children.push({
      text:
        `reservation: ${reservation.role ?? "?"}, ${id}estimate ${reservation.estimate ?? 0}, ttl ${reservation.ttlSeconds ?? 0}s; ` +
        `U ${reservation.used ?? 0} + R ${reservation.held ?? 0} (${reservation.liveHolds ?? 0} live holds)`,
    });
  }
  if (limit.localCacheHit !== undefined)
    children.push({ text: `local cache: ${limit.localCacheHit ? "hit" : "miss"}` });
  return { text: `limit ${name}: ${details.join(", ")}${limit.over ? " — over" : ""}`, children };
}

function statusText(status: ExplainedDescriptor["status"]): string {
  const parts = [status?.code ?? "UNKNOWN"];
  // proto3 JSON leaves out a zero `limitRemaining`; with a current limit, that zero is the answer.
  if (status?.currentLimit !== undefined) parts.push(`remaining ${status.limitRemaining ?? 0}`);
  if (status?.durationUntilReset !== undefined) parts.push(`reset ${status.durationUntilReset}`);
  return parts.join(", ");
}
