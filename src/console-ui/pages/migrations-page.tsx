import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { ExecutionJson, MigrationJson } from "../../console/console-contract";
import { callApi, messageOf } from "../api-client";
import { MigrationDetails } from "../migration-details";
import { isActive, latestOf, progressPercent, progressText } from "../migration-progress";
import { SignedIn } from "../sign-in";

type ExecutionsById = Record<string, ExecutionJson[]>;

const ACTIVE = new Set(["scheduled", "running"]);

/** The migrations API (README "Migrations API"): run, roll back and follow batched data migrations. */
export function MigrationsPage() {
  return (
    <section data-testid="page-migrations" class="page">
      <h1>Migrations</h1>
      <SignedIn>
        <MigrationsPanel />
      </SignedIn>
    </section>
  );
}

const executionsPath = (id: string) => `/console/api/migrations/${encodeURIComponent(id)}/executions`;

function MigrationsPanel() {
  const [migrations, setMigrations] = useState<MigrationJson[] | null>(null);
  const [executions, setExecutions] = useState<ExecutionsById>({});
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const pollFailed = useRef(false);

  const loadAll = useCallback(async () => {
    try {
      const list = await callApi<MigrationJson[]>("/console/api/migrations", { signedIn: true });
      const lists = await Promise.all(
        list.map((m) => callApi<ExecutionJson[]>(executionsPath(m.id), { signedIn: true })),
      );
      setMigrations(list);
      setExecutions(Object.fromEntries(list.map((m, i) => [m.id, lists[i]!])));
    } catch (caught) {
      setError(messageOf(caught));
    }
  }, []);
  useEffect(() => {
    void loadAll();
  }, [loadAll]);

  // While an execution is scheduled or running, its migration's executions (and the statuses) are polled.
  // The list and the executions are read one after the other, so either may be the first to show the change.
  const active = (migrations ?? [])
    .filter((m) => ACTIVE.has(m.status) || isActive(latestOf(executions[m.id])))
    .map((m) => m.id)
    .join(",");
  useEffect(() => {
    if (active === "") return;
    // One poll at a time, the next a second after the last answer: a slow API never piles polls up, and an
    // older answer never overwrites a newer one.
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      try {
        const ids = active.split(",");
        const lists = await Promise.all(
          ids.map((id) => callApi<ExecutionJson[]>(executionsPath(id), { signedIn: true })),
        );
        const list = await callApi<MigrationJson[]>("/console/api/migrations", { signedIn: true });
        if (stopped) return;
        setExecutions((before) => ({
          ...before,
          ...Object.fromEntries(ids.map((id, i) => [id, lists[i]!])),
        }));
        setMigrations(list);
        // A failed poll's message goes once a poll succeeds again; the user's own errors stay.
        if (pollFailed.current) {
          pollFailed.current = false;
          setError(null);
        }
      } catch (caught) {
        if (stopped) return;
        pollFailed.current = true;
        setError(messageOf(caught));
      }
      if (!stopped) timer = setTimeout(poll, 1000);
    };
    timer = setTimeout(poll, 1000);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [active]);

  const start = async (id: string, operation: "run" | "rollback", batchSize: string) => {
    const body = batchSize.trim() === "" ? {} : { "batch-size": Number(batchSize) };
    try {
      await callApi(`/console/api/migrations/${encodeURIComponent(id)}/${operation}`, {
        method: "POST",
        signedIn: true,
        body,
      });
      setError(null);
      await loadAll();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <>
      {error !== null && (
        <p class="error" data-testid="migrations-error">
          {error}
        </p>
      )}
      <div class="card">
        <table class="table migrations">
          <thead>
            <tr>
              <th>migration</th>
              <th>status</th>
              <th>progress</th>
              <th class="num">batches</th>
              <th>batch size</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {migrations?.map((migration) => (
              <MigrationRow
                key={migration.id}
                migration={migration}
                latest={latestOf(executions[migration.id])}
                isOpen={open === migration.id}
                onOpen={() => setOpen(open === migration.id ? null : migration.id)}
                onStart={start}
              />
            ))}
            {migrations?.length === 0 && (
              <tr>
                <td colSpan={6} class="muted">
                  No migrations are registered.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {open !== null && (
        <MigrationDetails migrationId={open} executions={executions[open] ?? []} onError={setError} />
      )}
    </>
  );
}

interface RowProps {
  migration: MigrationJson;
  latest: ExecutionJson | undefined;
  isOpen: boolean;
  onOpen: () => void;
  onStart: (id: string, operation: "run" | "rollback", batchSize: string) => void;
}

function MigrationRow({ migration, latest, isOpen, onOpen, onStart }: RowProps) {
  const [batchSize, setBatchSize] = useState("");
  const busy = isActive(latest);
  return (
    <tr data-testid="migration-row" data-migration-id={migration.id} class={isOpen ? "selected" : undefined}>
      <td>
        <div class="mono">{migration.id}</div>
        <div>{migration.label}</div>
        <div class="muted small">{migration.description}</div>
        {migration.tags.length > 0 && (
          <div>
            {migration.tags.map((tag) => (
              <span key={tag} class="flag flag-info">
                {tag}
              </span>
            ))}
          </div>
        )}
      </td>
      <td>
        <span data-testid="migration-status" class={`badge status-${migration.status}`}>
          {migration.status}
        </span>
      </td>
      <td class="progress-cell">
        <span data-testid="migration-progress" class="mono">
          {progressText(latest)}
        </span>
        {latest !== undefined && <ProgressBar percent={progressPercent(latest)} />}
      </td>
      <td class="num mono">{migration.total_batches}</td>
      <td>
        <input
          data-testid="migration-batch-size"
          class="batch-size"
          type="number"
          min={1}
          max={10000}
          placeholder="default"
          value={batchSize}
          onInput={(event) => setBatchSize(event.currentTarget.value)}
        />
      </td>
      <td class="actions">
        <button
          type="button"
          data-testid="migration-run"
          class="primary"
          disabled={busy}
          onClick={() => onStart(migration.id, "run", batchSize)}
        >
          Run
        </button>{" "}
        <button
          type="button"
          data-testid="migration-rollback"
          disabled={busy}
          onClick={() => onStart(migration.id, "rollback", batchSize)}
        >
          Roll back
        </button>{" "}
        <button type="button" data-testid="migration-open" class="link" onClick={onOpen}>
          {isOpen ? "Hide" : "Details"}
        </button>
      </td>
    </tr>
  );
}

/** A bar filled to `percent`; its width is set through the style object (allowed by the console's CSP). */
export function ProgressBar({ percent }: { percent: number }) {
  return (
    <div class="bar">
      <div class="bar-fill" style={{ width: `${percent}%` }} />
    </div>
  );
}
