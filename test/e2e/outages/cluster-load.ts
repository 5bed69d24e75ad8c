/**
 * Steady load on a Redis Cluster through the daemon, one stream of decisions per primary's slots
 * (docs/outages.md "Redis Cluster"): what each decision got, and when, for the failover and migration tests.
 */
import slotOf from "cluster-key-slot";
import type { Test } from "tap";
import { type DaemonProcess, startDaemon } from "../../helpers/daemon-process.js";
import { envoyRlsClient } from "../../helpers/envoy-rls-client.js";
import { type RedisCluster, startCluster } from "../../helpers/redis-cluster.js";
import { pollUntil } from "../../helpers/redis-process.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import { RULES } from "./outage-answers.js";
import { type Outcome, sleep, stopAtTeardown, timed, windowKey } from "./outage-harness.js";

/** Decisions a second on the doomed primary's slots, and on each other primary's (issue 30's load). */
export const DOOMED_RATE = 50;
export const HEALTHY_RATE = 20;

/** The roomy limit of outage-answers.ts's RULES: a million an hour. */
export const ROOMY_LIMIT = 1_000_000;

/** One decision of a stream. */
export interface Decision {
  /** When it was sent (`performance.now()`). */
  readonly sentMs: number;
  /** When it was answered. */
  readonly doneMs: number;
  readonly outcome: Outcome;
}

/** A stream of decisions on one descriptor value whose key lives on one primary. */
export interface SlotGroup {
  /** The roomy descriptor's value. */
  readonly value: string;
  /** Its Redis key (the hour's window). */
  readonly key: string;
  readonly decisions: Decision[];
}

/** The slot ranges `[from, to]` the node on `port` serves, from its own CLUSTER NODES line. */
export async function slotRanges(cluster: RedisCluster, port: number): Promise<number[][]> {
  const mine = (await cluster.cli(port, "CLUSTER", "NODES")).split("\n").find((l) => l.includes("myself"))!;
  return mine
    .split(" ")
    .slice(8)
    .filter((range) => !range.startsWith("["))
    .map((range) => range.split("-").map(Number));
}

/** A roomy value (`<prefix>N`) whose key's slot lies in `ranges`. */
export function valueIn(ranges: readonly number[][], prefix: string): { value: string; key: string } {
  for (let i = 0; ; i++) {
    const value = `${prefix}${i}`;
    const key = windowKey("outage", "roomy", value, 3600);
    const slot = slotOf(key);
    if (ranges.some(([from, to = from]) => slot >= from! && slot <= to!)) return { value, key };
  }
}

/**
 * Sends one roomy decision for `group` every `1000 / perSecond` ms, each on its own (they overlap when
 * slow), until `stop` is called; `stop` resolves once every decision sent has its answer.
 */
export function steadyLoad(
  client: ReturnType<typeof envoyRlsClient>,
  group: SlotGroup,
  perSecond: number,
): { pause(): void; resume(): void; stop(): Promise<void> } {
  const pending = new Set<Promise<void>>();
  let paused = false;
  const send = () => {
    if (paused) return;
    const sentMs = performance.now();
    const request = {
      domain: "outage",
      descriptors: [{ entries: [{ key: "roomy", value: group.value }] }],
    };
    const done = timed(() => client.shouldRateLimit(request)).then((outcome) => {
      group.decisions.push({ sentMs, doneMs: performance.now(), outcome });
      pending.delete(done);
    });
    pending.add(done);
  };
  const timer = setInterval(send, 1000 / perSecond);
  return {
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
    },
    stop: async () => {
      clearInterval(timer);
      await Promise.all(pending);
    },
  };
}

/** Whether a decision was counted by Redis: an answer with a remaining below the limit's first. */
export function counted(decision: Decision): boolean {
  const status = decision.outcome.response?.statuses[0];
  return (
    status?.code === "OK" && status.limit_remaining !== undefined && status.limit_remaining < ROOMY_LIMIT - 1
  );
}

/** A tally of what a group's decisions got: `counted`, or the failure (gRPC details, or `allow answer`). */
export function tally(decisions: readonly Decision[]): Record<string, number> {
  const result: Record<string, number> = {};
  for (const decision of decisions) {
    const what = counted(decision)
      ? "counted"
      : decision.outcome.error
        ? decision.outcome.error.details
        : "allow answer";
    result[what] = (result[what] ?? 0) + 1;
  }
  return result;
}

/** What {@link killPrimaryUnderLoad} saw. */
export interface FailoverRun {
  readonly cluster: RedisCluster;
  readonly daemon: DaemonProcess;
  /** The doomed primary's group first, then the two healthy ones'. */
  readonly groups: readonly SlotGroup[];
  /** When the doomed primary was killed, its replica reported itself primary (`ROLE`), and the lost slots first counted a decision sent after the kill. */
  readonly killedMs: number;
  readonly promotedMs: number;
  readonly firstAnswered: Decision;
}

/**
 * Issue 30's experiment: a six-node cluster (cluster-require-full-coverage no), the daemon (`entry`: its
 * script, default dist/) with `env`, two counted decisions per group, then {@link DOOMED_RATE} and
 * {@link HEALTHY_RATE} decisions a second; after a second, the first primary SIGKILLed (its stream paused
 * for the kill, once `WAIT` says its replica has every write); the load goes on until 1.5 s after the lost
 * slots first count a decision again. Everything stops at `t`'s teardown.
 */
export async function killPrimaryUnderLoad(
  t: Test,
  env: Record<string, string>,
  entry?: string,
): Promise<FailoverRun> {
  const cluster = await startCluster(t, { replicas: true });
  for (const node of cluster.nodes) {
    t.equal(await node.cli("CONFIG", "SET", "cluster-require-full-coverage", "no"), "OK");
  }
  const daemon = await startDaemon(
    {
      BACKEND_TYPE: "redis",
      REDIS_TYPE: "cluster",
      REDIS_SOCKET_TYPE: "tcp",
      REDIS_URL: cluster.url,
      LOG_FORMAT: "json",
      RUNTIME_ROOT: t.testdir({ config: { "rules.yaml": RULES } }),
      ...env,
    },
    20_000,
    entry ? { entry } : {},
  );
  stopAtTeardown(t, daemon);
  const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
  t.teardown(() => client.close());
  await stayInsideWindow(3600, 60);

  const [doomed, ...healthy] = cluster.nodes.slice(0, 3);
  const replica = cluster.nodes[3]!;
  const groups: SlotGroup[] = await Promise.all(
    [doomed!, ...healthy].map(async (node, i) => ({
      ...valueIn(await slotRanges(cluster, node.port), `p${i}-`),
      decisions: [],
    })),
  );
  // Two counted decisions each first: a counted answer then never looks like mode allow's.
  for (const group of groups) {
    for (let n = 0; n < 2; n++) {
      const answer = await client.shouldRateLimit({
        domain: "outage",
        descriptors: [{ entries: [{ key: "roomy", value: group.value }] }],
      });
      t.equal(answer.statuses[0]?.limit_remaining, 999_999 - n, `${group.value} warm-up ${n + 1}`);
    }
  }

  const loads = groups.map((group, i) => steadyLoad(client, group, i === 0 ? DOOMED_RATE : HEALTHY_RATE));
  await sleep(1000);
  // Every hit counted so far on the doomed primary reaches its replica before the kill (replication is
  // asynchronous: a hit acknowledged in the last instant could be lost with it, and the count with it).
  loads[0]!.pause();
  await sleep(50);
  t.equal(await doomed!.cli("WAIT", "1", "2000"), "1", "the replica has every write");
  await doomed!.kill();
  const killedMs = performance.now();
  loads[0]!.resume();
  await pollUntil(
    "the replica promoted",
    async () => ((await replica.cli("ROLE")).startsWith("master") ? true : undefined),
    { timeoutMs: 20_000, intervalMs: 20 },
  );
  const promotedMs = performance.now();
  const firstAnswered = await pollUntil(
    "the lost slots answering again",
    async () => groups[0]!.decisions.find((d) => d.sentMs > killedMs && counted(d)),
    { timeoutMs: 20_000, intervalMs: 10 },
  );
  await sleep(1500);
  await Promise.all(loads.map((load) => load.stop()));
  return { cluster, daemon, groups, killedMs, promotedMs, firstAnswered };
}
