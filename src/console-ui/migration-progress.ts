import type { ExecutionJson } from "../console/console-contract";

/** Statuses during which an execution still moves: the console polls its migration every second. */
export function isActive(execution: ExecutionJson | undefined): boolean {
  return execution?.status === "scheduled" || execution?.status === "running";
}

/** `NN %` of an execution: items processed over items total, 100 % once completed; `—` for none. */
export function progressText(execution: ExecutionJson | undefined): string {
  if (execution === undefined) return "—";
  return `${progressPercent(execution)} %`;
}

export function progressPercent(execution: ExecutionJson): number {
  if (execution.status === "completed") return 100;
  if (execution.items_total <= 0) return 0;
  return Math.min(100, Math.floor((execution.items_processed / execution.items_total) * 100));
}

/** The latest execution (the API lists them by id ascending). */
export function latestOf(executions: readonly ExecutionJson[] | undefined): ExecutionJson | undefined {
  return executions?.[executions.length - 1];
}
