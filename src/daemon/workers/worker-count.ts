import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { SettingsError } from "../../errors.js";
import type { WorkersSetting } from "../../settings/workers-setting.js";

/** What the count of worker threads depends on; {@link hostFacts} reads this host's. */
export interface HostFacts {
  /** `process.platform`. */
  readonly platform: string;
  /** `process.versions.node`. */
  readonly nodeVersion: string;
  /** CPUs in the process's affinity mask (`os.availableParallelism()`). */
  readonly affinityCpus: number;
  /** The cgroup's CPU quota in CPUs (`cpu.max` quota / period), undefined when there is none. */
  readonly quotaCpus: number | undefined;
}

/** How many decision threads to run, and a line to log when `auto` had to settle for one. */
export interface WorkerCount {
  readonly count: number;
  readonly warning: string | undefined;
}

/**
 * The first Node lines whose `net.Server.listen` takes `reusePort` (SO_REUSEPORT): 22.12 and 23.1; every
 * later major has it.
 */
export function nodeHasReusePort(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  if (major === 22) return minor >= 12;
  if (major === 23) return minor >= 1;
  return major > 23;
}

/** Why this host cannot share a port between threads, or undefined when it can. */
export function reusePortUnavailable(host: HostFacts): string | undefined {
  if (host.platform !== "linux") return `SO_REUSEPORT is used on Linux only (this is ${host.platform})`;
  if (!nodeHasReusePort(host.nodeVersion)) {
    return `Node ${host.nodeVersion} cannot listen with reusePort (Node 22.12 or later can)`;
  }
  return undefined;
}

/**
 * `WORKERS` resolved on this host: a number is taken as it is, `auto` is the CPUs the process may use (the
 * smaller of the affinity mask and the cgroup quota rounded up, at least 1). More than one thread needs
 * `reusePort`: where it is missing a number above 1 is a {@link SettingsError}, and `auto` falls back to
 * one thread with a warning (docs/workers.md).
 */
export function resolveWorkerCount(setting: WorkersSetting, host: HostFacts): WorkerCount {
  const unavailable = reusePortUnavailable(host);
  if (setting !== "auto") {
    if (setting > 1 && unavailable !== undefined) {
      throw new SettingsError([`WORKERS=${setting} needs several threads on one port, but ${unavailable}`]);
    }
    return { count: setting, warning: undefined };
  }
  const cpus = Math.max(
    1,
    Math.min(host.affinityCpus, host.quotaCpus === undefined ? Infinity : Math.ceil(host.quotaCpus)),
  );
  if (cpus > 1 && unavailable !== undefined) {
    return {
      count: 1,
      warning: `WORKERS=auto: serving from one thread although ${cpus} CPUs are available, because ${unavailable}`,
    };
  }
  return { count: cpus, warning: undefined };
}

/** This host's facts: the affinity mask, and the cgroup v2 (`cpu.max`) or v1 (`cfs_quota_us`) CPU quota. */
export function hostFacts(): HostFacts {
  return {
    platform: process.platform,
    nodeVersion: process.versions.node,
    affinityCpus: availableParallelism(),
    quotaCpus: cgroupQuotaCpus(readText),
  };
}

/** The CPU quota of the process's cgroup in CPUs, from the files `read` gives (undefined when unlimited). */
export function cgroupQuotaCpus(read: (path: string) => string | undefined): number | undefined {
  const v2 = read("/sys/fs/cgroup/cpu.max");
  if (v2 !== undefined) {
    const [quota, period] = v2.trim().split(/\s+/);
    return quotaOf(quota, period);
  }
  const quota =
    read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") ?? read("/sys/fs/cgroup/cpu,cpu/cpu.cfs_quota_us");
  const period =
    read("/sys/fs/cgroup/cpu/cpu.cfs_period_us") ?? read("/sys/fs/cgroup/cpu,cpu/cpu.cfs_period_us");
  return quotaOf(quota?.trim(), period?.trim());
}

function quotaOf(quota: string | undefined, period: string | undefined): number | undefined {
  const q = Number(quota);
  const p = Number(period);
  // "max" (v2) and -1 (v1) mean no quota.
  if (!Number.isFinite(q) || !Number.isFinite(p) || q <= 0 || p <= 0) return undefined;
  return q / p;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
