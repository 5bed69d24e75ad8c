import type { LimitJson, RuleNodeJson } from "../console/console-contract";
import { count, limitText, rate } from "./format";
import type { LiveByKey } from "./rule-live";

interface RuleTreeProps {
  rules: readonly RuleNodeJson[];
  visible: ReadonlySet<string>;
  live: LiveByKey;
  matchedKey: string | null;
}

/** One domain's rules as a table: nested descriptors indented under their parent, live cells on the right. */
export function RuleTree(props: RuleTreeProps) {
  const rows: preact.JSX.Element[] = [];
  const visit = (node: RuleNodeJson, depth: number) => {
    if (!props.visible.has(node.fullKey)) return;
    if (node.limit !== null || node.children.length > 0) {
      rows.push(
        <RuleRow
          key={node.fullKey}
          node={node}
          depth={depth}
          live={props.live}
          matched={node.fullKey === props.matchedKey}
        />,
      );
    }
    for (const child of node.children) visit(child, depth + 1);
  };
  for (const node of props.rules) visit(node, 0);
  return (
    <table class="table rules">
      <thead>
        <tr>
          <th>descriptor</th>
          <th>limit</th>
          <th>algorithm</th>
          <th>flags</th>
          <th class="num">hits/s</th>
          <th class="num">over/s</th>
          <th class="num">near/s</th>
          <th class="num">hits</th>
          <th class="num">over</th>
          <th class="num">near</th>
        </tr>
      </thead>
      <tbody>
        {rows.length > 0 ? (
          rows
        ) : (
          <tr>
            <td colSpan={10} class="muted">
              No rule matches the filter.
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

function RuleRow(props: { node: RuleNodeJson; depth: number; live: LiveByKey; matched: boolean }) {
  const { node } = props;
  const limit = node.limit;
  const cells = props.live.get(node.fullKey);
  return (
    <tr
      data-testid="rule-row"
      data-full-key={node.fullKey}
      data-matched={props.matched ? "true" : undefined}
      class={props.matched ? "matched" : undefined}
    >
      <td
        class="mono descriptor"
        style={{ paddingLeft: `${0.6 + props.depth * 1.25}rem` }}
        title={node.fullKey}
      >
        {props.depth > 0 && <span class="branch">└ </span>}
        {node.key}
        {node.value !== "" && <span class="value">={node.value}</span>}
        {limit?.name ? <span class="limit-name"> {limit.name}</span> : null}
        {node.source !== null && <span class="source"> {node.source}</span>}
      </td>
      <td>{limit !== null ? <LimitCell limit={limit} /> : <span class="muted">—</span>}</td>
      <td class="mono">
        {limit !== null && <span data-testid="rule-algorithm">{limit.algorithm}</span>}
        {limit?.burst != null && <span class="muted"> burst {limit.burst}</span>}
        {limit?.reservation != null && <ReservationNote reservation={limit.reservation} />}
      </td>
      <td>
        <Flags node={node} />
      </td>
      <LiveCell testId="rule-hits-rate" value={cells && rate(cells.hits)} />
      <LiveCell testId="rule-over-rate" value={cells && rate(cells.over)} bad={(cells?.over ?? 0) > 0} />
      <LiveCell testId="rule-near-rate" value={cells && rate(cells.near)} />
      <LiveCell testId="rule-total-hits" value={cells && count(cells.totalHits)} />
      <LiveCell
        testId="rule-total-over"
        value={cells && count(cells.totalOver)}
        bad={(cells?.totalOver ?? 0) > 0}
      />
      <LiveCell testId="rule-total-near" value={cells && count(cells.totalNear)} />
    </tr>
  );
}

function LimitCell({ limit }: { limit: LimitJson }) {
  return (
    <>
      <span data-testid="rule-limit" class={limit.unlimited ? "badge neutral" : undefined}>
        {limitText(limit)}
      </span>
      {limit.stacked.map((stacked, i) => (
        <div key={i} class="stacked muted">
          + {limitText(stacked)} {stacked.name ?? ""}{" "}
          {stacked.algorithm !== "fixed_window" ? stacked.algorithm : ""}
          {stacked.reservation !== null && <ReservationNote reservation={stacked.reservation} />}
        </div>
      ))}
      {limit.replaces.length > 0 && <div class="muted">replaces {limit.replaces.join(", ")}</div>}
    </>
  );
}

/** A limit's reservation: what each check holds, for how long, and which entry names the request. */
function ReservationNote({ reservation }: { reservation: NonNullable<LimitJson["reservation"]> }) {
  return (
    <div class="muted" data-testid="rule-reservation">
      reserves {reservation.estimate} for {reservation.ttlSeconds}s
      {reservation.requestIdKey !== null && ` per ${reservation.requestIdKey}`}
    </div>
  );
}

function Flags({ node }: { node: RuleNodeJson }) {
  const limit = node.limit;
  const flags = [
    limit?.shadowMode && "shadow",
    limit?.quotaMode && "quota",
    limit?.detailedMetric && "detailed",
    node.shareThreshold && "share_threshold",
  ].filter((flag): flag is string => typeof flag === "string");
  return (
    <>
      {flags.map((flag) => (
        <span key={flag} data-testid="rule-flag" class={`flag flag-${flag}`}>
          {flag}
        </span>
      ))}
      {node.wildcard && <span class="flag flag-info">wildcard</span>}
      {node.valueToMetric && <span class="flag flag-info">value_to_metric</span>}
    </>
  );
}

function LiveCell(props: { testId: string; value: string | undefined; bad?: boolean }) {
  if (props.value === undefined) return <td class="num muted">—</td>;
  return (
    <td data-testid={props.testId} class={props.bad ? "num mono bad-text" : "num mono"}>
      {props.value}
    </td>
  );
}
