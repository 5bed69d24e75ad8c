import t from "tap";
import { CODE_OK } from "../../../src/engine/decision-request.js";
import {
  CLOCK_SECONDS,
  decideWith,
  entries,
  NO_LIMIT,
  newEngine,
  newRegistry,
  request,
  ruleCounts,
  rulesFromYaml,
  UINT32_MAX,
} from "./decision-fixture.js";

// replaces is name-based across the request's descriptors.
const REPLACES_YAML = `domain: r
descriptors:
  - key: a
    rate_limit: {unit: minute, requests_per_unit: 10, name: limit_a}
  - key: b
    rate_limit: {unit: hour, requests_per_unit: 20, replaces: [{name: limit_a}, {name: limit_u}]}
  - key: u
    rate_limit: {unlimited: true, name: limit_u}
  - key: w
    rate_limit: {unlimited: true, replaces: [{name: limit_a}]}
`;
for (const order of [
  ["a", "b"],
  ["b", "a"],
]) {
  t.test(
    `replaced limit in request order ${order.join(",")} → {code OK}, not incremented, not counted`,
    async (t) => {
      const registry = newRegistry();
      const rules = rulesFromYaml(registry, REPLACES_YAML);
      const engine = newEngine(registry);
      const plan = engine.plan(
        rules,
        request(
          "r",
          order.map((k) => entries([k, "v"])),
        ),
        CLOCK_SECONDS,
      );
      t.same(
        plan.increments.map((i) => i.key),
        ["r_b_v_0"],
      );
      const decision = engine.complete(plan, [1], CLOCK_SECONDS);
      t.same(decision.statuses[order.indexOf("a")], NO_LIMIT);
      t.match(decision.statuses[order.indexOf("b")], {
        code: CODE_OK,
        limitRemaining: 19,
        durationUntilResetSeconds: 1378,
      });
      t.match(ruleCounts(registry, "r.a"), { total_hits: 0, within_limit: 0 });
      t.match(ruleCounts(registry, "r.b"), { total_hits: 1, within_limit: 1 });
    },
  );
}

t.test("a limit that is only named is not replaced without a replacer in the request", async (t) => {
  const registry = newRegistry();
  const decision = decideWith(
    newEngine(registry),
    rulesFromYaml(registry, REPLACES_YAML),
    request("r", [entries(["a", "v"])]),
    [3],
  );
  t.equal(decision.statuses[0]!.limitRemaining, 7);
});

t.test("an unlimited limit cannot be replaced, but its replaces still apply", async (t) => {
  const registry = newRegistry();
  const rules = rulesFromYaml(registry, REPLACES_YAML);
  const engine = newEngine(registry);
  const withB = decideWith(engine, rules, request("r", [entries(["u", "v"]), entries(["b", "v"])]), [1]);
  t.equal(withB.statuses[0]!.limitRemaining, UINT32_MAX, "u stays unlimited");
  const withW = decideWith(engine, rules, request("r", [entries(["a", "v"]), entries(["w", "v"])]), []);
  t.same(withW.statuses[0], NO_LIMIT, "a is replaced by the unlimited w");
  t.equal(withW.statuses[1]!.limitRemaining, UINT32_MAX);
});
