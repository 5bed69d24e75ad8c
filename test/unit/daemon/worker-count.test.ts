import t from "tap";
import {
  cgroupQuotaCpus,
  type HostFacts,
  nodeHasReusePort,
  resolveWorkerCount,
} from "../../../src/daemon/workers/worker-count.js";
import { SettingsError } from "../../../src/errors.js";
import { parseWorkers } from "../../../src/settings/workers-setting.js";

// WORKERS (docs/workers.md, docs/settings.md): a number or auto, and where more than one thread can serve.
const linux = (over: Partial<HostFacts> = {}): HostFacts => ({
  platform: "linux",
  nodeVersion: "26.1.0",
  affinityCpus: 16,
  quotaCpus: undefined,
  ...over,
});

t.test("WORKERS accepts auto and 1 to 256, and says what it wants otherwise", async (t) => {
  t.same(parseWorkers("auto"), { ok: true, value: "auto" });
  t.same(parseWorkers("AUTO"), { ok: true, value: "auto" });
  t.same(parseWorkers("1"), { ok: true, value: 1 });
  t.same(parseWorkers("256"), { ok: true, value: 256 });
  for (const bad of ["0", "257", "-1", "2.5", "two", ""]) {
    t.same(parseWorkers(bad), { ok: false, reason: "want auto or a whole number from 1 to 256" }, bad);
  }
});

t.test("reusePort: Node 22.12+, 23.1+ and every later major", async (t) => {
  t.same(["20.18.0", "22.11.0", "22.12.0", "23.0.0", "23.1.0", "24.0.0", "26.12.1"].map(nodeHasReusePort), [
    false,
    false,
    true,
    false,
    true,
    true,
    true,
  ]);
});

t.test("auto is the smaller of the affinity mask and the cgroup quota rounded up", async (t) => {
  t.same(resolveWorkerCount("auto", linux()), { count: 16, warning: undefined });
  t.same(resolveWorkerCount("auto", linux({ quotaCpus: 2.5 })), { count: 3, warning: undefined });
  t.same(resolveWorkerCount("auto", linux({ quotaCpus: 0.5 })), { count: 1, warning: undefined });
  t.same(resolveWorkerCount("auto", linux({ affinityCpus: 2, quotaCpus: 8 })), {
    count: 2,
    warning: undefined,
  });
  t.same(resolveWorkerCount(4, linux({ affinityCpus: 1 })), { count: 4, warning: undefined });
});

t.test(
  "without reusePort: a number above 1 is an error at start, auto falls back to 1 with a warning",
  async (t) => {
    const old = linux({ nodeVersion: "22.11.0" });
    const problemsOf = (run: () => unknown): readonly string[] => {
      try {
        run();
      } catch (error) {
        if (error instanceof SettingsError) return error.problems;
        throw error;
      }
      return [];
    };
    t.same(
      problemsOf(() => resolveWorkerCount(2, old)),
      [
        "WORKERS=2 needs several threads on one port, but Node 22.11.0 cannot listen with reusePort (Node 22.12 or later can)",
      ],
    );
    t.same(
      problemsOf(() => resolveWorkerCount(3, linux({ platform: "darwin" }))),
      [
        "WORKERS=3 needs several threads on one port, but SO_REUSEPORT is used on Linux only (this is darwin)",
      ],
    );
    t.same(resolveWorkerCount(1, old), { count: 1, warning: undefined });
    t.same(resolveWorkerCount("auto", linux({ platform: "darwin", affinityCpus: 8 })), {
      count: 1,
      warning:
        "WORKERS=auto: serving from one thread although 8 CPUs are available, because SO_REUSEPORT is used on Linux only (this is darwin)",
    });
    t.same(resolveWorkerCount("auto", linux({ platform: "darwin", affinityCpus: 1 })), {
      count: 1,
      warning: undefined,
    });
  },
);

t.test("the cgroup quota: v2 cpu.max, v1 cfs_quota_us / cfs_period_us, none when unlimited", async (t) => {
  const files = (entries: Record<string, string>) => (path: string) => entries[path];
  t.equal(cgroupQuotaCpus(files({ "/sys/fs/cgroup/cpu.max": "max 100000\n" })), undefined);
  t.equal(cgroupQuotaCpus(files({ "/sys/fs/cgroup/cpu.max": "250000 100000\n" })), 2.5);
  t.equal(
    cgroupQuotaCpus(
      files({
        "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "400000\n",
        "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
      }),
    ),
    4,
  );
  t.equal(
    cgroupQuotaCpus(
      files({
        "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
        "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
      }),
    ),
    undefined,
  );
  t.equal(cgroupQuotaCpus(files({})), undefined);
});
