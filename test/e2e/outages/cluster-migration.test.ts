// A hash slot moved from one primary to another while decisions keep arriving on it (docs/outages.md "Redis
// Cluster"): through MIGRATING/IMPORTING (ASK redirections once the key has moved) and the final SETSLOT
// (MOVED), every decision is counted, on every primary's slots, and the counters hold them all.
import slotOf from "cluster-key-slot";
import t from "tap";
import { startDaemon } from "../../helpers/daemon-process.js";
import { envoyRlsClient } from "../../helpers/envoy-rls-client.js";
import { startCluster } from "../../helpers/redis-cluster.js";
import { requireBinaries } from "../../helpers/redis-servers.js";
import { stayInsideWindow } from "../../helpers/window-guard.js";
import { counted, type SlotGroup, slotRanges, steadyLoad, tally, valueIn } from "./cluster-load.js";
import { RULES } from "./outage-answers.js";
import { sleep, stopAtTeardown } from "./outage-harness.js";

const VARIANTS: readonly { name: string; env: Record<string, string> }[] = [
  { name: "defaults", env: {} },
  { name: "a pipeline window", env: { REDIS_PIPELINE_WINDOW: "1ms", REDIS_PIPELINE_LIMIT: "8" } },
];

if (requireBinaries(t, ["redis-server", "redis-cli"])) {
  for (const variant of VARIANTS) {
    t.test(`a slot migrated under load, ${variant.name}`, async (t) => {
      const cluster = await startCluster(t);
      const daemon = await startDaemon({
        BACKEND_TYPE: "redis",
        REDIS_TYPE: "cluster",
        REDIS_SOCKET_TYPE: "tcp",
        REDIS_URL: cluster.url,
        LOG_FORMAT: "json",
        RUNTIME_ROOT: t.testdir({ config: { "rules.yaml": RULES } }),
        ...variant.env,
      });
      stopAtTeardown(t, daemon);
      const client = envoyRlsClient(`127.0.0.1:${daemon.grpcPort}`);
      t.teardown(() => client.close());
      await stayInsideWindow(3600, 60);

      const [source, target, third] = cluster.nodes;
      const groups: SlotGroup[] = await Promise.all(
        cluster.nodes.map(async (node, i) => ({
          ...valueIn(await slotRanges(cluster, node.port), `m${i}-`),
          decisions: [],
        })),
      );
      // Two counted decisions each first (a counted answer then never looks like a failure mode's).
      for (const group of groups) {
        for (let n = 0; n < 2; n++) {
          const answer = await client.shouldRateLimit({
            domain: "outage",
            descriptors: [{ entries: [{ key: "roomy", value: group.value }] }],
          });
          t.equal(answer.statuses[0]?.limit_remaining, 999_999 - n, `${group.value} warm-up ${n + 1}`);
        }
      }
      const moving = groups[0]!.key;
      const slot = String(slotOf(moving));
      const [sourceId, targetId] = await Promise.all(
        [source!, target!].map((node) => node.cli("CLUSTER", "MYID")),
      );

      const loads = groups.map((group) => steadyLoad(client, group, 40));
      await sleep(500);
      t.equal(await target!.cli("CLUSTER", "SETSLOT", slot, "IMPORTING", sourceId!), "OK");
      t.equal(await source!.cli("CLUSTER", "SETSLOT", slot, "MIGRATING", targetId!), "OK");
      await sleep(300);
      t.equal(
        await source!.cli("MIGRATE", "127.0.0.1", String(target!.port), "", "0", "5000", "KEYS", moving),
        "OK",
      );
      // The key is on the target now, the slot still the source's: the source answers ASK.
      await sleep(500);
      for (const node of [target!, source!, third!]) {
        t.equal(await node.cli("CLUSTER", "SETSLOT", slot, "NODE", targetId!), "OK");
      }
      // Now the source answers MOVED.
      await sleep(800);
      await Promise.all(loads.map((load) => load.stop()));

      for (const group of groups) {
        t.strictSame(
          tally(group.decisions),
          { counted: group.decisions.length },
          `${group.value}: all counted`,
        );
        t.ok(group.decisions.length >= 60, `${group.value}: ${group.decisions.length} decisions`);
        const value = Number(await target!.cli("-c", "GET", group.key));
        t.equal(value, 2 + group.decisions.filter(counted).length, `${group.value}: counter`);
      }
      t.equal(await target!.cli("CLUSTER", "COUNTKEYSINSLOT", slot), "1", "the key lives on the target");
      t.equal(await source!.cli("CLUSTER", "COUNTKEYSINSLOT", slot), "0");
    });
  }
}
