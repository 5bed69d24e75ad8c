import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { descriptorLine } from "../config/yaml/descriptor-line.js";
import type { CounterStore } from "../engine/counter-store.js";
import { DecisionEngine, type DecisionEngineOptions } from "../engine/decision-engine.js";
import type { DecisionRequest } from "../engine/decision-request.js";
import { describeDescriptor } from "../engine/explain/describe-descriptor.js";
import { type SearchLevel, traceMatch } from "../engine/explain/trace-match.js";
import { lookOnly, UNCOUNTED_ENGINE_STATS, uncountedRule } from "../engine/explain/uncounted.js";
import { valuesIfCounted } from "../engine/explain/values-if-counted.js";
import type { RuleNode, RuleSet } from "../engine/rule-set.js";
import { mappedRuleSet } from "../engine/scaled-rule-set.js";
import { ServiceError } from "../errors.js";
import type { ExplainedRules, Explanation, RuleOrigin } from "./explanation.js";

/** What a {@link DecisionExplainer} works with. */
export interface DecisionExplainerOptions {
  /** The service's engine settings; the explainer's engine counts nothing and remembers nothing. */
  readonly engineOptions: DecisionEngineOptions;
  readonly store: CounterStore;
  readonly rules: () => RuleSet | undefined;
  readonly nowMs?: () => number;
}

/**
 * `POST /explain` (docs/explain.md): the decision a request would get now, with the story of
 * each descriptor — the search level by level, the rule and where it was configured, overrides,
 * `replaces`, `unlimited`, shadow and quota mode, the limits with their counters' current values — without
 * counting anything: the counters are read, never written, no stat moves and the local over-limit cache is
 * only looked at. The decision is the engine's own, completed with what the store's increments would answer.
 */
export class DecisionExplainer {
  readonly #options: DecisionExplainerOptions;
  readonly #engine: DecisionEngine;
  readonly #nowMs: () => number;
  readonly #uncounted = new WeakMap<RuleSet, RuleSet>();

  constructor(options: DecisionExplainerOptions) {
    this.#options = options;
    this.#nowMs = options.nowMs ?? Date.now;
    this.#engine = new DecisionEngine({
      ...options.engineOptions,
      stats: UNCOUNTED_ENGINE_STATS,
      localCache: lookOnly(options.engineOptions.localCache),
      debug: undefined,
    });
  }

  async explain(request: DecisionRequest): Promise<Explanation> {
    const rules = this.#options.rules();
    if (rules === undefined) throw new ServiceError("no rate limit configuration loaded");
    const uncounted = this.#uncountedRules(rules);
    const nowMs = this.#nowMs();
    const plan = this.#engine.plan(uncounted, request, Math.floor(nowMs / 1000), nowMs);
    const current = plan.increments.length > 0 ? await this.#options.store.read(plan.increments) : [];
    const values = valuesIfCounted(plan.increments, current);
    const decision = this.#engine.complete(plan, values, Math.floor(nowMs / 1000), nowMs);
    const root = uncounted.domains.get(request.domain);
    const quotaMode = this.#options.engineOptions.quotaMode;
    const descriptors = await Promise.all(
      request.descriptors.map(async (descriptor, i) => {
        // Matched as the engine matches: without the entries that name the request (reservations).
        const matched = plan.request.descriptors[i]!.entries;
        const trace = root === undefined ? undefined : traceMatch(root, matched);
        const story = describeDescriptor(plan, i, trace, current, quotaMode);
        return {
          entries: descriptor.entries,
          hits: hitsOf(descriptor.hitsAddend, request.hitsAddend),
          search: trace?.levels ?? [],
          ...story,
          origin: trace?.last?.limit ? await originOf(rules, trace.last, trace.levels) : null,
        };
      }),
    );
    return {
      domain: request.domain,
      rules: sourceOf(rules),
      store: this.#options.store.name,
      descriptors,
      decision,
    };
  }

  #uncountedRules(rules: RuleSet): RuleSet {
    let uncounted = this.#uncounted.get(rules);
    if (uncounted === undefined) {
      uncounted = mappedRuleSet(rules, uncountedRule);
      this.#uncounted.set(rules, uncounted);
    }
    return uncounted;
  }
}

/** A descriptor's hits as the engine counts them: its own addend when set (even 0), else max(1, request's). */
function hitsOf(own: bigint | number | undefined, requestHits: number): number {
  return own === undefined ? Math.max(1, requestHits) : Number(own);
}

function sourceOf(rules: RuleSet): ExplainedRules {
  const origin = rules.origin;
  if (origin === undefined) return { source: "unknown" };
  const loadedAt = new Date(origin.loadedAtMs).toISOString();
  return origin.kind === "xds"
    ? { source: "xds", version: origin.version, loadedAt }
    : { source: "file", loadedAt };
}

/**
 * Where `node` was configured. A file's line is looked up in the file as it is now, and given only when the
 * file still holds the text that was compiled (its SHA-256 is unchanged).
 */
async function originOf(
  rules: RuleSet,
  node: RuleNode,
  levels: readonly SearchLevel[],
): Promise<RuleOrigin | null> {
  const origin = rules.origin;
  const name = node.source;
  if (origin === undefined || name === undefined) return null;
  if (origin.kind === "xds") return { xdsResource: name, version: origin.version };
  const file = origin.files.get(name);
  if (file === undefined) return { file: name, line: null };
  let text: string;
  try {
    text = await readFile(file.path, "utf8");
  } catch {
    return { file: name, line: null };
  }
  if (createHash("sha256").update(text).digest("hex") !== file.sha256) return { file: name, line: null };
  const composites = levels.map((level) => level.matched ?? "");
  return { file: name, line: descriptorLine(name, text, composites) ?? null };
}
