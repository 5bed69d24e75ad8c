import { useState } from "preact/hooks";
import type { ExecutionJson } from "../console/console-contract";
import { ExecutionLogs } from "./execution-logs";
import { progressText } from "./migration-progress";

interface MigrationDetailsProps {
  migrationId: string;
  executions: ExecutionJson[];
  onError: (message: string) => void;
}

/** A migration's executions, newest first; opening one shows its logs. */
export function MigrationDetails({ migrationId, executions, onError }: MigrationDetailsProps) {
  const [openId, setOpenId] = useState<number | null>(null);
  const newestFirst = executions.slice().reverse();
  const opened = executions.find((execution) => execution.id === openId);
  return (
    <section class="card details">
      <h2>
        Executions of <code>{migrationId}</code>
      </h2>
      <table data-testid="executions-table" class="table">
        <thead>
          <tr>
            <th class="num">id</th>
            <th>operation</th>
            <th>status</th>
            <th>progress</th>
            <th class="num">items</th>
            <th>started</th>
            <th>ended</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {newestFirst.map((execution) => (
            <tr
              key={execution.id}
              data-testid="execution-row"
              data-execution-id={execution.id}
              class={execution.id === openId ? "selected" : undefined}
            >
              <td class="num mono">
                {execution.id}
                {execution.parent_execution_id !== null && (
                  <div class="muted small">child of {execution.parent_execution_id}</div>
                )}
              </td>
              <td class="mono">{execution.operation}</td>
              <td>
                <span data-testid="execution-status" class={`badge status-${execution.status}`}>
                  {execution.status}
                </span>
              </td>
              <td data-testid="execution-progress" class="mono">
                {progressText(execution)}
              </td>
              <td class="num mono">
                {execution.items_processed} / {execution.items_total}
              </td>
              <td class="mono small">{execution.start_date_gmt ?? "—"}</td>
              <td class="mono small">{execution.end_date_gmt ?? "—"}</td>
              <td>
                <button
                  type="button"
                  data-testid="execution-open"
                  class="link"
                  onClick={() => setOpenId(execution.id)}
                >
                  Logs
                </button>
              </td>
            </tr>
          ))}
          {executions.length === 0 && (
            <tr>
              <td colSpan={8} class="muted">
                Never run.
              </td>
            </tr>
          )}
        </tbody>
      </table>
      {opened !== undefined && (
        <ExecutionLogs
          key={opened.id}
          executionId={opened.id}
          refreshKey={`${opened.status}:${opened.items_processed}`}
          onError={onError}
        />
      )}
    </section>
  );
}
