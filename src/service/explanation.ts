import type { Decision, DecisionEntry } from "../engine/decision-request.js";
import type { DescriptorStory } from "../engine/explain/describe-descriptor.js";
import type { SearchLevel } from "../engine/explain/trace-match.js";

// Types only, importing only the engine's pure types: the console's browser app reads `ExplanationJson`
// through src/console/console-contract.ts, so nothing here may need Node.

/** Where a rule was configured: a file and line, or an xDS resource and the snapshot's version. */
export type RuleOrigin =
  | { readonly file: string; readonly line: number | null }
  | { readonly xdsResource: string; readonly version: string };

/**
 * Where the rules an explanation used came from, and when they were loaded (ISO 8601). Each variant names
 * the others' fields as absent, so a reader may look at `version` and `loadedAt` whatever the source.
 */
export type ExplainedRules =
  | { readonly source: "file"; readonly loadedAt: string; readonly version?: undefined }
  | { readonly source: "xds"; readonly version: string; readonly loadedAt: string }
  | { readonly source: "unknown"; readonly version?: undefined; readonly loadedAt?: undefined };

/** One descriptor of an explanation, before its status is turned into JSON by the transport. */
export interface ExplainedDescriptor extends DescriptorStory {
  readonly entries: readonly DecisionEntry[];
  readonly hits: number;
  readonly search: readonly SearchLevel[];
  readonly origin: RuleOrigin | null;
}

/** The whole story of a decision that was not made. */
export interface Explanation {
  readonly domain: string;
  readonly rules: ExplainedRules;
  readonly store: string;
  readonly descriptors: readonly ExplainedDescriptor[];
  /** What the decision would be now: the transport renders its statuses as `/json` does. */
  readonly decision: Decision;
}

/** A descriptor's status exactly as `/json` renders it: proto3 JSON, so zero values are left out. */
export interface ExplainStatusJson {
  readonly code?: string;
  readonly currentLimit?: {
    readonly name?: string;
    readonly requestsPerUnit?: number;
    readonly unit?: string;
    readonly unitMultiplier?: number;
  };
  readonly limitRemaining?: number;
  readonly durationUntilReset?: string;
}

/** One descriptor of {@link ExplanationJson}: its story and the status the request would get. */
export interface ExplainedDescriptorJson extends ExplainedDescriptor {
  readonly status: ExplainStatusJson;
}

/** What `POST /explain` answers (README "Explain a decision"): the explanation with `/json`'s codes. */
export interface ExplanationJson {
  readonly domain: string;
  /** The `overallCode` `/json` would answer now (`UNKNOWN` when it has none). */
  readonly overallCode: string;
  readonly rules: ExplainedRules;
  readonly store: string;
  readonly descriptors: readonly ExplainedDescriptorJson[];
}
