import type {
  ExplainedDescriptorJson,
  ExplainedLimit,
  ExplanationJson,
  SearchLevel,
} from "../console/console-contract";
import { entriesText } from "./descriptor-text";
import { limitText } from "./format";

/** The whole answer: the overall code, then each descriptor's story. */
export function ExplainResult({ answer }: { answer: ExplanationJson }) {
  const overall = answer.overallCode ?? "UNKNOWN";
  return (
    <div class="explain-result">
      <div class="card explain-summary">
        <span>overall</span>
        <span data-testid="explain-overall" class={codeClass(overall)}>
          {overall}
        </span>
        <span class="muted">
          domain <code>{answer.domain}</code> · store {answer.store} · rules from {answer.rules.source}
          {answer.rules.version ? ` ${answer.rules.version}` : ""}
          {answer.rules.loadedAt ? `, loaded ${answer.rules.loadedAt}` : ""}
        </span>
      </div>
      {answer.descriptors.map((descriptor, i) => (
        <DescriptorCard key={i} index={i} descriptor={descriptor} />
      ))}
    </div>
  );
}

function DescriptorCard({ descriptor, index }: { descriptor: ExplainedDescriptorJson; index: number }) {
  const status = descriptor.status ?? {};
  const code = status.code ?? "UNKNOWN";
  return (
    <article data-testid="explain-descriptor" class="card descriptor-card">
      <header class="descriptor-head">
        <span class="muted">#{index + 1}</span>
        <code class="entries">{entriesText(descriptor.entries)}</code>
        <span data-testid="explain-status" class={codeClass(code)}>
          {code}
        </span>
      </header>
      <div class="descriptor-body">
        <div>
          <h3>Search</h3>
          <SearchTree levels={descriptor.search} />
        </div>
        <div>
          <h3>Rule</h3>
          <p>
            <code data-testid="explain-rule">{descriptor.rule ?? "no rule"}</code>{" "}
            <Origin descriptor={descriptor} />
          </p>
          <p class="why">{descriptor.why}</p>
          <Modifiers descriptor={descriptor} />
          <h3>Status</h3>
          <table class="kv">
            <tbody>
              <tr>
                <th>remaining</th>
                {/* Proto JSON leaves a 0 out: with a current limit, a missing limitRemaining is 0. */}
                <td data-testid="explain-remaining" class="mono">
                  {status.currentLimit ? (status.limitRemaining ?? 0) : "—"}
                </td>
              </tr>
              <tr>
                <th>reset in</th>
                <td class="mono">{status.durationUntilReset ?? "—"}</td>
              </tr>
              <tr>
                <th>current limit</th>
                <td class="mono">
                  {status.currentLimit
                    ? `${status.currentLimit.requestsPerUnit ?? 0} / ${status.currentLimit.unit ?? "?"}` +
                      (status.currentLimit.name ? ` (${status.currentLimit.name})` : "")
                    : "—"}
                </td>
              </tr>
              <tr>
                <th>hits</th>
                <td class="mono">{descriptor.hits}</td>
              </tr>
            </tbody>
          </table>
        </div>
      </div>
      {descriptor.limits.length > 0 && <LimitsTable limits={descriptor.limits} />}
    </article>
  );
}

/** The matcher's walk: each level's entry, every candidate tried with ✓ or ✗, and the node it chose. */
function SearchTree({ levels }: { levels: readonly SearchLevel[] }) {
  if (levels.length === 0) {
    return (
      <p data-testid="explain-tree" class="muted">
        nothing searched (unknown domain)
      </p>
    );
  }
  return (
    <ol data-testid="explain-tree" class="search-tree">
      {levels.map((level, i) => (
        <li key={i}>
          <div>
            level {i + 1}: <code>{`${level.entry.key}=${level.entry.value}`}</code>{" "}
            {level.matched !== null ? (
              <span class="ok-text">
                → <code>{level.matched}</code> ({level.how})
              </span>
            ) : (
              <span class="bad-text">→ no match, search ends</span>
            )}
          </div>
          <ul class="candidates">
            {level.tried.map((tried, j) => (
              <li key={j} class={tried.matched ? "ok-text" : "muted"}>
                <span class="mark">{tried.matched ? "✓" : "✗"}</span> <code>{tried.candidate}</code>{" "}
                <span class="how">{tried.how}</span>
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ol>
  );
}

function Origin({ descriptor }: { descriptor: ExplainedDescriptorJson }) {
  const origin = descriptor.origin;
  if (origin === null) return null;
  const text =
    "file" in origin
      ? `${origin.file}${origin.line !== null ? `:${origin.line}` : ""}`
      : `xDS ${origin.xdsResource} @ ${origin.version}`;
  return <span class="muted mono">({text})</span>;
}

function Modifiers({ descriptor }: { descriptor: ExplainedDescriptorJson }) {
  const items = [
    descriptor.override && `override ${descriptor.override.requestsPerUnit} / ${descriptor.override.unit}`,
    descriptor.replaced && "replaced",
    descriptor.unlimited && "unlimited",
    descriptor.shadowMode && "shadow mode",
    descriptor.quotaMode && "quota mode",
  ].filter((item): item is string => typeof item === "string");
  if (items.length === 0) return null;
  return (
    <p>
      {items.map((item) => (
        <span key={item} class="flag">
          {item}
        </span>
      ))}
    </p>
  );
}

function LimitsTable({ limits }: { limits: readonly ExplainedLimit[] }) {
  return (
    <table class="table limits">
      <thead>
        <tr>
          <th>limit</th>
          <th>algorithm</th>
          <th>rate</th>
          <th class="num">window</th>
          <th>counters (before this request)</th>
        </tr>
      </thead>
      <tbody>
        {limits.map((limit, i) => (
          <tr key={i}>
            <td class="mono">{limit.name || "—"}</td>
            <td class="mono">
              {limit.algorithm}
              {limit.burst !== undefined && <span class="muted"> burst {limit.burst}</span>}
            </td>
            <td class="mono">{limitText({ ...limit, unlimited: false })}</td>
            <td class="num mono">{limit.windowSeconds}s</td>
            <td class="mono">
              {limit.localCacheHit && <div class="bad-text">local over-limit cache hit</div>}
              {limit.counters.map((counter) => (
                <div key={counter.key}>
                  {counter.key} = <strong>{counter.value}</strong>
                </div>
              ))}
              {limit.reservation !== undefined && (
                <div class="muted">
                  reservation ({limit.reservation.role}): U <strong>{limit.reservation.used}</strong> + R{" "}
                  <strong>{limit.reservation.held}</strong> in {limit.reservation.liveHolds} live holds of{" "}
                  {limit.reservation.estimate}
                  {limit.reservation.requestId !== null && `, request ${limit.reservation.requestId}`}
                </div>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function codeClass(code: string): string {
  return code === "OK" ? "badge ok" : code === "OVER_LIMIT" ? "badge bad" : "badge neutral";
}
