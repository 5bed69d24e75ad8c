import t from "tap";
import { CircuitBreaker } from "../../../src/backends/circuit-breaker.js";
import { NodeBreakers } from "../../../src/backends/node-breakers.js";
import { nodeTransitionLine } from "../../../src/daemon/backend-outages.js";
import { BackendUnavailableError } from "../../../src/errors.js";

// One breaker per Redis Cluster primary (docs/outages.md "Redis Cluster"), on an injected clock.
const CLOSED = new Error("Connection is closed.");

function setUp() {
  const clock = { ms: 0 };
  const lines: string[] = [];
  const breakers = new NodeBreakers(
    (node) =>
      new CircuitBreaker({
        failures: 2,
        cooldownMs: 1000,
        maxCooldownMs: 4000,
        nowMs: () => clock.ms,
        onTransition: (transition) => lines.push(nodeTransitionLine(node, transition, "allow")),
      }),
  );
  return { clock, lines, breakers };
}

/** One call to `nodes`, where `failing` failed. */
function call(breakers: NodeBreakers, nodes: string[], failing: string[] = []): void {
  const admissions = breakers.admit(nodes);
  breakers.settle(nodes, admissions, (node) => (failing.includes(node) ? CLOSED : undefined));
}

t.test("a node's breaker refuses only calls with a command for that node", async (t) => {
  const { breakers, lines } = setUp();
  call(breakers, ["a:1", "b:2"], ["a:1"]);
  call(breakers, ["a:1"], ["a:1"]);
  t.strictSame(lines, [
    "counter store node a:1 unavailable (Connection is closed.), answering its slots with failure mode allow",
  ]);
  t.equal(breakers.isOpen("a:1"), true);
  t.equal(breakers.isOpen("b:2"), false);
  t.equal(breakers.anyOpen, true);
  t.equal(breakers.state, "open");
  t.throws(() => breakers.admit(["b:2", "a:1"]), {
    message: "redis: unavailable (circuit breaker open: node a:1)",
    clientMessage: "redis: unavailable (circuit breaker open)",
  });
  t.strictSame(breakers.admit(["b:2"]), ["call"], "b:2 alone still goes");
  t.equal(breakers.admit(["c:3"])[0], "call", "a node seen for the first time starts closed");
  t.strictSame(breakers.nodes, ["a:1", "b:2", "c:3"]);
});

t.test("each node has its own probe; a refusal hands the others' probe back", async (t) => {
  const { breakers, clock, lines } = setUp();
  for (const node of ["a:1", "b:2"]) {
    call(breakers, [node], [node]);
    call(breakers, [node], [node]);
  }
  clock.ms = 1000;
  t.strictSame(breakers.admit(["a:1"]), ["probe"]);
  t.equal(breakers.state, "probing");
  // b:2's probe is taken by a call that a:1 (probing) then refuses: b:2's turn passes to the next call.
  t.throws(() => breakers.admit(["b:2", "a:1"]), BackendUnavailableError);
  const next = breakers.admit(["b:2"]);
  t.strictSame(next, ["probe"], "b:2's probe was handed back");
  breakers.settle(["b:2"], next, () => undefined);
  t.equal(breakers.isOpen("b:2"), false, "b:2's probe closed its breaker");
  t.equal(breakers.isOpen("a:1"), true, "a:1 still probing");
  t.match(lines.at(-1), /^counter store node b:2 recovered after 1\.0 s$/);
  breakers.settle(["a:1"], ["probe"], () => CLOSED);
  t.match(
    lines.at(-1),
    /^counter store node a:1 still unavailable after 1\.0 s \(Connection is closed\.\), next probe in 2\.0 s$/,
  );
});

t.test("a call that ended without telling hands its admissions back", async (t) => {
  const { breakers, clock } = setUp();
  call(breakers, ["a:1"], ["a:1"]);
  call(breakers, ["a:1"], ["a:1"]);
  clock.ms = 1000;
  const admissions = breakers.admit(["a:1"]);
  breakers.settle(["a:1"], admissions, () => null);
  t.strictSame(breakers.admit(["a:1"]), ["probe"], "the probe's turn went to the next call");
});

t.test("a node forgotten (its slots served elsewhere) drops its breaker", async (t) => {
  const { breakers } = setUp();
  call(breakers, ["a:1"], ["a:1"]);
  call(breakers, ["a:1"], ["a:1"]);
  breakers.forget("a:1");
  t.equal(breakers.isOpen("a:1"), false);
  t.equal(breakers.anyOpen, false);
  t.equal(breakers.state, "closed");
  t.strictSame(breakers.nodes, []);
});
