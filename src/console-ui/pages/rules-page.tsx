import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import type { ExplanationJson, RulesAnswer, TrafficTick } from "../../console/console-contract";
import { callApi, messageOf } from "../api-client";
import { parseEntries } from "../descriptor-text";
import { time } from "../format";
import { useLiveState, useTicks } from "../live-stream";
import { descriptorSearch, visibleKeys } from "../rule-filter";
import { type LiveByKey, liveAfterTick, liveFromRules } from "../rule-live";
import { RuleTree } from "../rule-tree";

/** What a descriptor search found: the rule's full key (null: none), or why it could not ask. */
type Match = { rule: string | null } | { error: string } | null;

/** Every domain's rules as a tree with live rates; a filter, or a descriptor to find its rule. */
export function RulesPage() {
  const live = useLiveState();
  const [answer, setAnswer] = useState<RulesAnswer | null>(null);
  const [cells, setCells] = useState<LiveByKey>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [search, setSearch] = useState("");
  const [domain, setDomain] = useState("");
  const match = useDescriptorMatch(search, domain);
  const isDescriptor = search.includes("=");
  const matchedKey = match !== null && "rule" in match ? match.rule : null;
  // A rule set too large for one answer is searched on the server: the text typed, or the matched rule.
  const [large, setLarge] = useState(false);
  const serverQuery = useDebounced(large ? (isDescriptor ? (matchedKey ?? "") : search.trim()) : "", 300);

  useEffect(() => {
    let current = true;
    const path =
      serverQuery === "" ? "/console/api/rules" : `/console/api/rules?q=${encodeURIComponent(serverQuery)}`;
    callApi<RulesAnswer>(path)
      .then((rules) => {
        if (!current) return;
        setAnswer(rules);
        setCells(liveFromRules(rules.domains));
        setError(null);
        if (serverQuery === "") setLarge(rules.truncated);
        setDomain((chosen) => chosen || rules.domains[0]?.domain || "");
      })
      .catch((caught) => current && setError(messageOf(caught)));
    return () => {
      current = false;
    };
  }, [live.reloads, serverQuery]);
  useTicks(useCallback((tick: TrafficTick) => setCells((before) => liveAfterTick(before, tick)), []));

  return (
    <section data-testid="page-rules" class="page">
      <h1>Rules</h1>
      <div class="toolbar">
        <input
          data-testid="rule-search"
          class="search mono"
          type="search"
          placeholder="filter by key or value, or find a descriptor's rule: domain=rl; header_match=api, user_id=u42"
          value={search}
          onInput={(event) => setSearch(event.currentTarget.value)}
        />
        <select
          data-testid="rule-search-domain"
          value={domain}
          onChange={(event) => setDomain(event.currentTarget.value)}
          title="domain for a descriptor search"
        >
          {answer?.domains.map((d) => (
            <option key={d.domain} value={d.domain}>
              {d.domain}
            </option>
          ))}
        </select>
        {answer?.loadedAtMs != null && <span class="muted">loaded {time(answer.loadedAtMs)}</span>}
      </div>
      {isDescriptor && match !== null && (
        <p class="search-result">
          {"error" in match ? (
            <span class="error" data-testid="rule-search-result">
              {match.error}
            </span>
          ) : (
            <>
              matched rule: <code data-testid="rule-search-result">{match.rule ?? "no rule matches"}</code>
            </>
          )}
        </p>
      )}
      {answer?.truncated && (
        <p class="muted" data-testid="rules-truncated">
          Showing {answer.shown} of {answer.total} descriptors: type a key, a value or a descriptor to find
          the others.
        </p>
      )}
      {error !== null && <p class="error">{error}</p>}
      {answer?.domains.length === 0 && <p class="muted">No rules are loaded: every request is allowed.</p>}
      {answer?.domains.map((d) => (
        <section key={d.domain} data-testid="rule-domain" data-domain={d.domain} class="card">
          <h2>
            domain <code>{d.domain}</code>
          </h2>
          <RuleTree
            rules={d.rules}
            visible={isDescriptor ? allKeys(d.rules) : visibleKeys(d.rules, search)}
            live={cells}
            matchedKey={matchedKey}
          />
        </section>
      ))}
    </section>
  );
}

function allKeys(rules: RulesAnswer["domains"][number]["rules"]): Set<string> {
  return visibleKeys(rules, "");
}

/** Asks POST /explain which rule a typed descriptor matches, a moment after the typing stops. */
function useDescriptorMatch(search: string, selectedDomain: string): Match {
  const [match, setMatch] = useState<Match>(null);
  const query = useMemo(() => descriptorSearch(search, selectedDomain), [search, selectedDomain]);
  useEffect(() => {
    if (query === null) {
      setMatch(null);
      return;
    }
    const entries = parseEntries(query.line);
    if (typeof entries === "string") {
      setMatch({ error: entries });
      return;
    }
    let current = true;
    const timer = setTimeout(() => {
      callApi<ExplanationJson>("/explain", {
        method: "POST",
        body: { domain: query.domain, descriptors: [{ entries }] },
      })
        .then((explanation) => current && setMatch({ rule: explanation.descriptors[0]?.rule ?? null }))
        .catch((caught) => current && setMatch({ error: messageOf(caught) }));
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [query]);
  return match;
}

/** `value`, once it has stayed the same for `delayMs`. */
function useDebounced(value: string, delayMs: number): string {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}
