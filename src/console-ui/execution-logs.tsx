import { useEffect, useState } from "preact/hooks";
import type { LogJson } from "../console/console-contract";
import { callApi, messageOf } from "./api-client";

/** The log types batches write (src/migrations/migration.ts LOG_TYPES). */
const LOG_TYPES = ["info", "warning", "error", "debug"] as const;

/** An execution's log with the API's filters: type, text search, order and limit. */
interface ExecutionLogsProps {
  executionId: number;
  /** Changes while the execution runs (its status and progress), so the log follows it. */
  refreshKey: string;
  onError: (message: string) => void;
}

export function ExecutionLogs({ executionId, refreshKey, onError }: ExecutionLogsProps) {
  const [type, setType] = useState("all");
  const [search, setSearch] = useState("");
  const [order, setOrder] = useState("ASC");
  const [limit, setLimit] = useState("100");
  const [logs, setLogs] = useState<LogJson[] | null>(null);

  useEffect(() => {
    let current = true;
    const query = new URLSearchParams({ order });
    if (limit.trim() !== "") query.set("limit", limit.trim());
    if (type !== "all") query.set("type", type);
    if (search.trim() !== "") query.set("search", search.trim());
    const timer = setTimeout(() => {
      callApi<LogJson[]>(`/console/api/executions/${executionId}/logs?${query}`, { signedIn: true })
        .then((answer) => current && setLogs(answer))
        .catch((caught) => current && onError(messageOf(caught)));
    }, 200);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [executionId, type, search, order, limit, onError, refreshKey]);

  return (
    <div data-testid="migration-logs" class="logs">
      <h3>Logs of execution {executionId}</h3>
      <div class="toolbar">
        <select data-testid="log-type-filter" value={type} onChange={(e) => setType(e.currentTarget.value)}>
          <option value="all">all</option>
          {LOG_TYPES.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        <input
          data-testid="log-search"
          type="search"
          placeholder="search messages"
          value={search}
          onInput={(e) => setSearch(e.currentTarget.value)}
        />
        <select data-testid="log-order" value={order} onChange={(e) => setOrder(e.currentTarget.value)}>
          <option value="ASC">ASC (oldest first)</option>
          <option value="DESC">DESC (newest first)</option>
        </select>
        <label class="inline-label">
          limit
          <input
            data-testid="log-limit"
            class="batch-size"
            type="number"
            min={1}
            max={200}
            value={limit}
            onInput={(e) => setLimit(e.currentTarget.value)}
          />
        </label>
      </div>
      <table class="table">
        <thead>
          <tr>
            <th class="num">id</th>
            <th>type</th>
            <th>message</th>
            <th>data</th>
            <th>at</th>
          </tr>
        </thead>
        <tbody>
          {logs?.map((log) => (
            <tr key={log.id} data-testid="log-row">
              <td class="num mono">{log.id}</td>
              <td>
                <span data-testid="log-type" class={`badge log-${log.type}`}>
                  {log.type}
                </span>
              </td>
              <td data-testid="log-message">{log.message}</td>
              <td class="mono small">{dataText(log.data)}</td>
              <td class="mono small">{log.created_at}</td>
            </tr>
          ))}
          {logs?.length === 0 && (
            <tr>
              <td colSpan={5} class="muted">
                No log entries match.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}

function dataText(data: unknown): string {
  if (data === null || data === undefined) return "";
  if (typeof data === "object" && Object.keys(data).length === 0) return "";
  return JSON.stringify(data);
}
