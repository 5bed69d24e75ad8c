import { useEffect, useState } from "preact/hooks";
import type { Overview } from "../../console/console-contract";
import { callApi, messageOf } from "../api-client";
import { bytes, duration, rate, time } from "../format";
import { useLiveState } from "../live-stream";
import { TrafficChart } from "../traffic-chart";

/** Health, store, rules, database and live traffic at a glance. */
export function OverviewPage() {
  const live = useLiveState();
  const [overview, setOverview] = useState<Overview | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    callApi<Overview>("/console/api/overview")
      .then((answer) => {
        if (!current) return;
        setOverview(answer);
        setError(null);
      })
      .catch((caught) => current && setError(messageOf(caught)));
    return () => {
      current = false;
    };
  }, [live.reloads]);
  const latest = live.latest;
  return (
    <section data-testid="page-overview" class="page">
      <h1>Overview</h1>
      {error !== null && <p class="error">{error}</p>}
      <div class="cards">
        <div class="card">
          <h2>Traffic</h2>
          <div class="stats">
            <Stat label="hits/s" testId="traffic-hits" value={rate(latest?.hits)} />
            <Stat label="ok/s" testId="traffic-ok" value={rate(latest?.ok)} tone="ok" />
            <Stat label="over/s" testId="traffic-over" value={rate(latest?.over)} tone="bad" />
          </div>
          <TrafficChart ticks={live.ticks} />
        </div>
      </div>
      {overview !== null && <OverviewCards overview={overview} breaker={latest?.breaker} />}
    </section>
  );
}

function OverviewCards({ overview, breaker }: { overview: Overview; breaker: string | undefined }) {
  const { health, store, rules, management } = overview;
  return (
    <div class="cards cards-grid">
      <div class="card">
        <h2>Health</h2>
        <p>
          <span data-testid="health-overall" class={health.healthy ? "badge ok" : "badge bad"}>
            {health.healthy ? "healthy" : "unhealthy"}
          </span>
        </p>
        <table class="kv">
          <tbody>
            {Object.entries(health.components).map(([name, ok]) => (
              <tr key={name}>
                <th>{name}</th>
                <td>
                  <span
                    data-testid="health-component"
                    data-component={name}
                    class={ok ? "badge ok" : "badge bad"}
                  >
                    {ok ? "ok" : "failing"}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="card">
        <h2>Counter store</h2>
        <table class="kv">
          <tbody>
            <Row label="type" testId="store-type" value={store.type} />
            <Row label="failure mode" testId="failure-mode" value={store.failureMode} />
            <Row label="breaker" testId="breaker-state" value={breaker ?? store.breaker} />
            <Row label="pending" value={store.pending === null ? "—" : String(store.pending)} />
          </tbody>
        </table>
      </div>
      <div class="card card-wide">
        <h2>Rules</h2>
        <table class="kv">
          <tbody>
            <Row label="source" testId="rules-source" value={rules.source} />
            <Row label="location" value={rules.location} mono />
            <Row label="version" testId="rules-version" value={rules.version ?? "—"} mono />
            <Row label="domains" value={String(rules.domains)} />
            <Row label="rules" testId="rules-count" value={String(rules.rules)} />
            <Row
              label="last reload"
              testId="last-reload"
              value={
                rules.lastLoad ? time(rules.lastLoad.atMs) : rules.loadedAtMs ? time(rules.loadedAtMs) : "—"
              }
            />
            <Row label="reloads ok / failed" value={`${rules.loadSuccesses} / ${rules.loadErrors}`} />
          </tbody>
        </table>
        {rules.lastLoad !== null && !rules.lastLoad.ok && (
          <p class="error" data-testid="last-reload-error">
            {rules.lastLoad.error}
          </p>
        )}
        {rules.files.length > 0 && (
          <ul class="files">
            {rules.files.map((file) => (
              <li key={file.name} title={file.path}>
                <code>{file.name}</code> <span class="muted mono">{file.sha256.slice(0, 12)}</span>
              </li>
            ))}
          </ul>
        )}
      </div>
      <div class="card">
        <h2>Daemon</h2>
        <table class="kv">
          <tbody>
            <Row label="version" value={overview.version} />
            <Row label="uptime" value={duration(overview.process.uptimeSeconds)} />
            <Row label="database" value={management.database} />
            <Row
              label="database state"
              testId="database-state"
              value={management.ready ? "ready" : "not ready"}
            />
            <Row label="memory (RSS)" value={bytes(overview.process.rssBytes)} />
            <Row label="heap used" value={bytes(overview.process.heapUsedBytes)} />
            <Row
              label="sinks"
              value={
                Object.entries(overview.sinks)
                  .filter(([, on]) => on)
                  .map(([name]) => name)
                  .join(", ") || "none"
              }
            />
          </tbody>
        </table>
      </div>
    </div>
  );
}

function Stat(props: { label: string; testId: string; value: string; tone?: "ok" | "bad" }) {
  return (
    <div class={`stat ${props.tone ?? ""}`}>
      <div class="stat-value" data-testid={props.testId}>
        {props.value}
      </div>
      <div class="stat-label">{props.label}</div>
    </div>
  );
}

function Row(props: { label: string; value: string; testId?: string; mono?: boolean }) {
  return (
    <tr>
      <th>{props.label}</th>
      <td class={props.mono ? "mono" : undefined} data-testid={props.testId}>
        {props.value}
      </td>
    </tr>
  );
}
